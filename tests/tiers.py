"""The test tiers, kept in one place: which existing tests leave the fast tier (README's test command,
`python -m pytest -m "not slow and not browser"`) and why. tests/conftest.py marks them at collection.

- slow: over ~5 s each on the 2-core CPU machine (real runs in subprocesses, brokers, whole-tree reads);
  CI runs them after the fast tier (.ci/run). Every test file keeps at least one test in the fast tier.
- browser: drives a real Chromium (any test using the `driver` or `browser` fixture is marked by itself;
  the ones that reach it at run time are listed here).
- gpu: needs a CUDA GPU (skipped on a CPU machine).
- postgres: uses the PostgreSQL server (marked by itself: the `pg_url` fixture or db_url's PostgreSQL half).

New tests mark themselves (`@pytest.mark.slow`); this map is for tests already written. Keys are node ids
without parameters (`tests/test_x.py::test_y`: every parameter) or with them (one parameter set).
Seconds are measured on this 2-core machine under the load of other work (pytest --durations).
"""
from __future__ import annotations

SLOW: dict[str, str] = {
    # 2026-12-07: the fast tier took 573-638 s on a machine that ran it in 284-299 s the day before (4fcddea's
    # own fast tier: 610 s there); the five heaviest calls move out (measured on that machine, pytest --durations)
    "tests/test_claims_per_gpu.py::test_a_figure_measured_on_one_gpu_never_stands_for_another": "2 sets, 26-40 s",
    "tests/test_detector_online.py::test_resolution_is_the_step_found_in_95pct_of_draws": "32 s",
    "tests/test_detect_short.py::test_short_histories_and_software_changes_on_held_out_noise": "30 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[sparse_selectors/torch_mean_pool/s1024_b64_d25_h4kv2]": "22 s",
    "tests/test_hardware.py::test_cli_exit_0_without_a_quality_difference": "19 s",
    "tests/test_backfill.py::test_ab_of_identical_code_interleaves_and_passes_the_gate": "6 s",
    "tests/test_backfill.py::test_backfill_runs_each_commits_own_code_and_records_what_fails": "10 s",
    "tests/test_backfill.py::test_kwatch_backfill_stores_commit_and_date_skips_measured_and_records_import_failures": "2 sets, 3-3 s",
    "tests/test_backfill.py::test_kwatch_gate_ab_of_identical_code_passes": "7 s",
    "tests/test_claims_cli.py::test_claims_json_from_database": "4 s",
    "tests/test_claims_cli.py::test_claims_markdown_and_table_from_result_files": "7 s",
    "tests/test_claims_cli.py::test_results_folder_reads_compressed_result_files": "6 s",
    "tests/test_claims_cli.py::test_results_folder_skips_json_that_is_not_a_result_file": "4 s",
    "tests/test_cli.py::test_ingest_twice_and_refusals": "4 s",
    "tests/test_cli.py::test_list_and_unknown_technique": "5 s",
    "tests/test_cli_errors.py::test_not_a_database_and_unmigrated_database": "4 s",
    "tests/test_cli_errors.py::test_one_line_errors[args0-words0]": "3 s",
    "tests/test_cli_errors.py::test_one_line_errors[args2-words2]": "3 s",
    "tests/test_cli_errors.py::test_read_commands_create_no_database": "7 s",
    "tests/test_cli_small_items.py::test_detect_without_nightly_runs_says_so": "3 s",
    "tests/test_cli_small_items.py::test_gate_takes_short_run_ids_and_keeps_markdown_in_its_file": "3 s",
    "tests/test_cli_small_items.py::test_truncated_json_and_future_schema_messages": "3 s",
    "tests/test_code_hash.py::test_hash_changes_exactly_when_imported_code_changes": "3 s",
    "tests/test_code_hash_args.py::test_variants_of_one_target_differ_and_a_plain_impl_keeps_its_closure_hash": "2 s",
    "tests/test_committed_results.py::test_committed_file_is_valid[h100/nightly_v4_353e003.json.gz]": "4 s",
    "tests/test_committed_results.py::test_committed_file_is_valid[h200/nightly_v4_08e103a.json.gz]": "3 s",
    "tests/test_committed_results.py::test_committed_file_is_valid[h200/nightly_6c16be7.json.gz]": "4 s",
    "tests/test_committed_results.py::test_committed_file_is_valid[h200/nightly_9cc68a3.json.gz]": "4 s",
    "tests/test_committed_results.py::test_committed_file_is_valid[h200/nightly_v4_3508815.json.gz]": "4 s",
    "tests/test_committed_results.py::test_committed_file_is_valid[h200/nightly_v4_905ed2f.json.gz]": "4 s",
    "tests/test_committed_results.py::test_committed_file_is_valid[h200/nightly_v4_cef2892.json.gz]": "4 s",
    "tests/test_committed_results.py::test_committed_file_is_valid[h200/nightly_v4_dce11dc.json.gz]": "4 s",
    "tests/test_committed_results.py::test_largest_files_keep_samples_at_timer_precision": "8 sets, 4-6 s",
    "tests/test_dashboard_alerts.py::test_alerts_page_filters_from_the_link": "2 s",
    "tests/test_dashboard_alerts.py::test_states_and_runs_before[sqlite]": "3 s",
    "tests/test_dashboard_bench.py::test_harness_times_every_page_on_both_databases": "15 s",
    "tests/test_dashboard_bench.py::test_postgres_twin_holds_the_same_rows_and_is_dropped": "3 s",
    "tests/test_dashboard_bench.py::test_results_by_id_reads_what_the_full_query_reads": "2 sets, 7-7 s",
    "tests/test_dashboard_claims_page.py::test_ours_names_day_and_run": "5 s",
    "tests/test_dashboard_compare.py::test_commit_against_commit_reads_every_run_of_each": "5 s",
    "tests/test_dashboard_compare.py::test_compare_permalink_round_trip": "6 s",
    "tests/test_dashboard_compare.py::test_reading_only_the_rows_a_verdict_needs_changes_no_verdict": "6 s",
    "tests/test_dashboard_health_when.py::test_judged_runs_on_both_databases[postgresql]": "2 s",
    "tests/test_dashboard_trends.py::test_protocols_are_separate_lines": "2 s",
    "tests/test_dashboard_trends.py::test_trends_permalink_round_trip": "3 s",
    "tests/test_dashboard_trends.py::test_two_hardware_labels_are_two_lines": "2 s",
    "tests/test_decode_dataflow.py::test_dataflow_greedy_tokens_agree_with_the_oracle": "4 s",
    "tests/test_decode_dataflow.py::test_dataflow_kernel_loads_weights_before_its_first_wait_and_fits_four_programs_per_sm": "2 s",
    "tests/test_decode_dataflow.py::test_dataflow_step_is_the_fused_step_and_leaves_its_counters_at_zero": "4 sets, 2-7 s",
    "tests/test_decode_sweep_cli.py::test_a_named_set_dry_runs_and_records_its_set_and_commit": "2 sets, 11-15 s",
    "tests/test_detect_benchmark.py::test_detect_bench_on_repeated_runs_end_to_end": "7 s",
    "tests/test_detect_history.py::test_a_muted_series_is_listed_but_does_not_fail": "5 s",
    "tests/test_detect_history.py::test_detect_stores_changes_and_ack_rebaselines": "2 sets, 14-14 s",
    "tests/test_detect_tune.py::test_the_split_puts_quiet_and_noisy_series_of_each_run_set_in_both_halves": "3 s",
    "tests/test_detector_online.py::test_a_change_found_late_is_listed_once_and_never_fails": "5 s",
    "tests/test_exp_runner.py::test_attention_probe_counts_rescales": "4 s",
    "tests/test_exp_runner.py::test_exp_probe_and_rate_rows": "3 s",
    "tests/test_fleet.py::test_200_jobs_on_8_workers_each_run_once_stored_and_only_on_their_labels": "42 s",
    "tests/test_fleet.py::test_a_worker_killed_mid_job_has_its_job_redone_by_another": "11 s",
    "tests/test_fleet.py::test_the_nightly_fans_out_per_label_and_reports_once_with_the_label_nobody_serves": "37 s",
    "tests/test_gate_real.py::test_a_correctness_failure_fails_the_gate": "4 s",
    "tests/test_gate_real.py::test_a_real_slowdown_is_confirmed_on_remeasurement": "7 s",
    "tests/test_gate_real.py::test_a_suspicious_speedup_is_flagged_and_rechecked_on_fresh_inputs": "8 s",
    "tests/test_gate_real.py::test_an_ambiguous_series_is_remeasured_before_deciding": "5 s",
    "tests/test_gate_real.py::test_mutes_are_listed_not_dropped": "9 s",
    "tests/test_gate_refs.py::test_refs_resolve_in_the_database_and_reports_are_stored": "2 sets, 8-18 s",
    "tests/test_gate_refs.py::test_unknown_ref_is_refused_clearly": "8 s",
    "tests/test_gemm_fp32_ws.py::test_shipped_configs_build_warp_specialised_for_sm90": "9 s",
    "tests/test_ingest_bad_values.py::test_cli_refusal_creates_no_database_and_partial_run_is_shown": "4 s",
    "tests/test_ingest_concurrent.py::test_concurrent_overlapping_ingests": "6 s",
    "tests/test_interop_kernelbench.py::test_grade_folder_checks_correctness_then_speed_and_stores_the_run": "9 s",
    "tests/test_interop_kernelbench.py::test_grade_single_pair_and_gate_sees_the_failure": "4 s",
    "tests/test_interop_pytest_benchmark.py::test_ingest_maps_pytest_benchmark_faithfully": "2 sets, 3-4 s",
    "tests/test_msa_fused.py::test_topk_rows_breaks_ties_like_topk_blocks": "3 sets, 3-16 s",
    "tests/test_needle_probe.py::test_missed_needle_shows_in_fidelity_and_retrieval": "3 s",
    "tests/test_needle_probe.py::test_selector_finds_an_obvious_needle_at_every_depth": "4 sets, 2-2 s",
    "tests/test_nightly_budget.py::test_committed_h200_runs_put_the_nightly_tier_within_its_budget": "6 s",
    "tests/test_nightly_budget.py::test_nightly_report_gives_the_run_time_against_the_budget": "6 s",
    "tests/test_nightly_job.py::test_a_quality_fraction_regression_against_the_previous_night_fails_it_unless_muted": "10 s",
    "tests/test_nightly_job.py::test_a_timing_regression_against_the_previous_night_waits_for_the_detector": "4 s",
    "tests/test_nightly_job.py::test_nightly_exit_code_follows_new_regressions": "14 s",
    "tests/test_nightly_job.py::test_nightly_runs_ingests_detects_and_reports": "7 s",
    "tests/test_nightly_new_histories.py::test_a_protocol_change_is_reported_as_new_histories": "7 s",
    "tests/test_nightly_new_histories.py::test_a_series_with_its_own_long_history_is_not_listed": "7 s",
    "tests/test_nightly_noise.py::test_nightly_lists_series_too_noisy_for_a_5pct_step": "8 s",
    "tests/test_nightly_verdict.py::test_nightly_report_tells_the_truth": "18 s",
    "tests/test_protocol.py::test_autotuner_choice_recorded_for_first_triton_job": "3 s",
    "tests/test_resultfile_gzip.py::test_ingest_and_detect_bench_read_gz": "2 sets, 4-5 s",
    "tests/test_resultfile_gzip.py::test_repeated_runs_write_numbered_compressed_files": "7 s",
    "tests/test_resultfile_rewrites.py::test_sigterm_ends_a_run_with_its_finished_jobs_in_a_valid_file": "4 s",
    "tests/test_results_tree_ingests.py::test_results_tree_ingests_whole_and_again_as_a_no_op": "30 s",
    "tests/test_run_store_option.py::test_repeat_writes_and_stores_every_run": "8 s",
    "tests/test_run_store_option.py::test_runners_entry_point_writes_without_a_database": "4 s",
    "tests/test_run_summary.py::test_failing_run_summary_names_the_rows_at_80_columns": "6 s",
    "tests/test_sample_precision.py::test_compact_results_rewrites_a_file_and_changes_nothing_else": "3 s",
    "tests/test_security_reports.py::test_gate_markdown_and_json_with_hostile_names": "5 s",
    "tests/test_security_roles.py::test_dashboard_pages_work_through_the_reader": "18 s",
    "tests/test_security_roles.py::test_roles_command_prints_no_password_and_is_idempotent": "9 s",
    "tests/test_security_roles.py::test_tables_of_later_migrations_reach_the_roles": "10 s",
    "tests/test_security_roles.py::test_writer_cannot_migrate_or_move_the_schema_version": "14 s",
    "tests/test_security_roles.py::test_writer_stores_runs_reader_cannot_write": "28 s",
    "tests/test_security_sandbox.py::test_grade_runs_a_solution_without_secrets_and_under_a_memory_limit": "11 s",
    "tests/test_security_urls.py::test_cli_lines_and_errors_mask_the_password": "9 s",
    "tests/test_serving_kernels.py::test_gelu_tanh_error_hides_under_bf16_rounding": "3 s",
    "tests/test_smoke_every_impl.py::test_dense_attention_runs_on_the_cpu": "17 s",
    "tests/test_smoke_every_impl.py::test_every_implementation_runs_its_smoke_cases": "25 sets, 5-30 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[activations/torch_gelu_tanh/t8n512]": "2 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[block_scaled_formats/torch_bfp4_block32/a_outlier_r64c256]": "24 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[block_scaled_formats/torch_int4_tensor/a_outlier_r64c256]": "27 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[block_scaled_formats/torch_mxfp4/a_outlier_r64c256]": "30 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[block_scaled_formats/torch_nvfp4/a_outlier_r64c256]": "30 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[fused_norms/triton_fused/rms_res_t8h64]": "4 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[gemm_fp32_emulation/triton_bf16x6_tma/m64n64k64]": "30 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[gemm_fp32_emulation_sweep/triton_dot_bf16x6/sweep_smoke]": "3 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[monarch/cublas_dense/b8_n64_nb8]": "5 s",
    "tests/test_smoke_tolerances.py::test_cheap_check_passes_on_200_fresh_seeds[monarch/torch_butterfly/b8_n64_nb8]": "3 s",
    "tests/test_sparse_gemm.py::test_csr_path_computes_x_times_w_transposed": "2 s",
    "tests/test_sparse_kernel.py::test_flex_block_mask_holds_the_same_selection": "6 s",
    "tests/test_sparse_kernel.py::test_kernel_matches_oracle_with_variable_block_counts": "2 sets, 3-4 s",
    "tests/test_sparse_mqar.py::test_committed_checkpoint_recalls_densely_and_loses_it_to_a_selector_unseen_by_the_loss": "6 s",
    "tests/test_sparse_selectors.py::test_selection_runs_in_our_kernel_and_in_flex_alike[exact_topk]": "8 s",
    "tests/test_sparse_selectors.py::test_selector_beats_chance_on_topic_structured_inputs[msa_fused]": "5 s",
    "tests/test_sparse_selectors.py::test_selector_is_valid_with_the_shared_budget[msa_fused]": "4 s",
    "tests/test_timing_rules.py::test_the_reading_flush_reads_and_the_zeroing_flush_writes": "3 s",
    "tests/test_timing_seed.py::test_a_change_between_runs_timed_on_different_instances_is_not_blocking[seeds0-False]": "4 s",
    "tests/test_verdict.py::test_h200_runs_of_one_commit_pass_the_gate": "9 s",
    "tests/test_verdict.py::test_needle_grid_pooled_and_single_trial_flips_never_regress": "4 s",
    "tests/test_verdict_same_everywhere.py::test_gate_and_dashboard_agree_on_every_series": "2 sets, 6-12 s",
    "tests/test_verdict_same_everywhere.py::test_health_on_real_needle_runs_shows_no_single_trial_flip": "5 s",
    "tests/test_verdict_spread.py::test_database_learns_the_same_table_as_the_files": "2 sets, 7-7 s",
    "tests/test_verdict_spread.py::test_eager_decode_is_judged_on_its_own_spread": "6 s",
    "tests/test_verdict_spread.py::test_needle_grid_flip_between_same_code_nightlies_is_not_a_regression": "6 s",
    "tests/test_verdict_spread.py::test_shipped_table_is_learned_from_the_committed_results": "31 s",
    "tests/test_verdict_spread.py::test_two_nightlies_of_the_same_kernels_pass_with_spreads_learned_without_them":
        "shares the 31 s learned table",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[1-96-384-128-k16-config0]": "2 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[1-96-768-128-k16-config6]": "3 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[13-160-384-128-k16-config1]": "3 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[13-160-384-128-k16-config9]": "2 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[13-160-384-128-k8-config2]": "3 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[13-160-512-128-k16-config5]": "3 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[13-160-640-128-k16-config11]": "3 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[13-256-640-128-k16-config7]": "2 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[40-64-512-64-k16-config3]": "5 s",
    "tests/test_w4a16_gemm.py::test_decode_kernel_matches_dequantize_then_gemm[40-64-512-64-k8-config4]": "2 s",
    "tests/test_w4a16_gemm.py::test_fused_kernel_matches_dequantize_then_gemm[13-160-384-128-config1]": "3 s",
    "tests/test_w4a16_gemm.py::test_fused_kernel_matches_dequantize_then_gemm[13-160-384-128-config2]": "3 s",
    "tests/test_w4a16_gemm.py::test_fused_kernel_matches_dequantize_then_gemm[13-160-384-128-config5]": "2 s",
    "tests/test_w4a16_gemm.py::test_streamk_kernel_matches_dequantize_then_gemm[13-160-640-4]": "5 s",
    "tests/test_w4a16_gemm.py::test_streamk_kernel_matches_dequantize_then_gemm[2-64-512-64]": "5 s",
    "tests/test_w4a16_gemm.py::test_streamk_kernel_matches_dequantize_then_gemm[3-128-1024-7]": "10 s",
    "tests/test_w4a16_gemm.py::test_tma_kernel_matches_dequantize_then_gemm[1-96-384-config0]": "3 s",
    "tests/test_zeta_recall.py::test_zeta_recalls_aligned_needles_at_64k_over_many_seeds": "62 s at load 6",
    "tests/test_db_url_passwords.py::test_every_command_works_with_a_special_password_and_never_prints_it":
        "2 sets, 40-52 s at load 6",
    "tests/test_claims_per_gpu.py::test_cpu_runs_never_count_as_gpu_hardware": "2 sets, 13-26 s at load 6",
    "tests/test_claims_per_gpu.py::test_h200_nightly_statuses_the_data_supports": "2 sets, 9-10 s at load 6",
    "tests/test_dashboard_alerts.py::test_states_and_runs_before[postgresql]": "16 s at load 6",
    "tests/test_fleet_small_items.py::test_a_refusal_quotes_a_long_name_shortened": "14 s at load 6",
    "tests/test_fleet_small_items.py::test_an_unusable_database_url_is_one_line_and_exit_2": "2 sets, 11-12 s at load 6",
    "tests/test_cli_errors.py::test_one_line_errors[args3-words3]": "14 s at load 6",
    "tests/test_cli_errors.py::test_one_line_errors[args5-words5]": "12 s at load 6",
    "tests/test_fleet_submit_checks.py::test_submit_refuses_in_one_line_and_queues_nothing[args1-no_such_technique]":
        "13 s at load 6",
    "tests/test_hardware.py::test_pick_and_cli_on_the_database": "2 sets, 14-21 s at load 5",
}

# Kept in the fast tier although their function is listed as slow: one cheap parameter set of it.
KEEP_FAST: dict[str, str] = {
    "tests/test_smoke_every_impl.py::test_every_implementation_runs_its_smoke_cases[morton_order]":
        "5 s: the smoke_full path end to end, with a GPU-only implementation recorded as skipped",
    "tests/test_backfill.py::test_kwatch_backfill_stores_commit_and_date_skips_measured_and_records_import_failures"
    "[sqlite]": "3 s: kwatch backfill end to end",
    "tests/test_cli_small_items.py::test_truncated_json_and_future_schema_messages": "3 s",
    "tests/test_decode_dataflow.py::test_dataflow_step_is_the_fused_step_and_leaves_its_counters_at_zero[48-opts2]":
        "2 s: the dataflow step against the fused step",
    "tests/test_nightly_job.py::test_a_timing_regression_against_the_previous_night_waits_for_the_detector": "4 s",
    "tests/test_run_store_option.py::test_runners_entry_point_writes_without_a_database": "4 s",
}

# Test files all of whose tests are slow: the module they test keeps fast tests in the file named.
COVERED_BY: dict[str, str] = {
    "tests/test_decode_sweep_cli.py": "tests/test_decode_step.py",
    "tests/test_gate_refs.py": "tests/test_gate_ab_verdict.py",
    "tests/test_ingest_concurrent.py": "tests/test_db_ingest.py",
    "tests/test_nightly_new_histories.py": "tests/test_nightly_job.py",
    "tests/test_nightly_noise.py": "tests/test_nightly_job.py",
    "tests/test_nightly_verdict.py": "tests/test_nightly_job.py",
    "tests/test_results_tree_ingests.py": "tests/test_committed_results.py",
    "tests/test_verdict_same_everywhere.py": "tests/test_verdict.py",
}

BROWSER: dict[str, str] = {
    "tests/test_security_urls.py::test_dashboard_start_line_sidebar_and_notes_mask_the_password":
        "asks for the driver at run time",
}

GPU: dict[str, str] = {
    "tests/test_timing_capture_gpu.py": "CUDA events and graphs on a GPU",
}

BROWSER_FIXTURES = ("driver", "browser")  # browser: test_security_reports' fixture that asks for driver
POSTGRES_FIXTURES = ("pg_url",)


def marks_for(nodeid: str, fixturenames: list[str] | tuple[str, ...], params: dict) -> set[str]:
    """The tier markers of one collected test, from its node id, the fixtures it uses and its parameters."""
    base = nodeid.split("[", 1)[0]
    keys = {nodeid, base, base.split("::", 1)[0]}
    marks = {name for name, table in (("slow", SLOW), ("browser", BROWSER), ("gpu", GPU)) if keys & table.keys()}
    if nodeid in KEEP_FAST:
        marks.discard("slow")
    if any(f in fixturenames for f in BROWSER_FIXTURES):
        marks.add("browser")
    if any(f in fixturenames for f in POSTGRES_FIXTURES) or params.get("db_url") == "postgresql":
        marks.add("postgres")
    return marks
