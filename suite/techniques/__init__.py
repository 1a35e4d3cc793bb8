"""One package per page technique."""
