"""Study drivers: measurements made once for a question, whose files are committed under results/."""
