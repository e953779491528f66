# The Azure Public Dataset VM traces (V1 2017, V2 2019; issue 16): the same analyses as on Google where they apply.
# Readings files are mapped to per-VM records bucketed by vmid (as task_usage is by task), reduced per bucket to
# per-VM series, then analysed through the Google analyses' library functions. Defined only on an Azure run
# (trace.source azure, azure-sample, or local with the dataset's layout).

from colocate.trace import azure as _azure

AZ = config["azure"]
AZ_TABLES = ("vm_cpu_readings", "vmtable")
AZ_CATEGORY = "Azure VM traces (issue 16)"
AZ_TRACE = CAPABILITIES.trace
AZURE = SRC.family == "azure"



if AZURE:
    AZ_READINGS = shard_stems("vm_cpu_readings")
    if SRC.name == "azure" and len(AZ_READINGS) > 8 * len(BUCKETS):
        # a reduce job holds 1/B of every file's records (~450 B each; a V2 file holds ~10 M): warned, not refused
        logger.warning(
            f"colocate: {len(AZ_READINGS)} Azure readings files over {len(BUCKETS)} buckets is "
            f"~{len(AZ_READINGS) * 10e6 * 450 / len(BUCKETS) / 2**30:.1f} GB a reduce job; set "
            "mapreduce.buckets to about files × 2.6 (512 for the whole of V2) to stay near 4 GB"
        )

    TARGETS.append(
        (
            AZ_TABLES,
            [
                f"{RESULTS}/azure/vmtable.parquet",
                f"{RESULTS}/tables/azure_table4_fourier.csv",
                f"{RESULTS}/tables/azure_daily_phases.csv",
                f"{RESULTS}/figures/azure_fourier_spectra.png",
                f"{RESULTS}/tables/azure_unuvar_ks.csv",
                f"{RESULTS}/figures/azure_unuvar_beta_fit.png",
                f"{RESULTS}/figures/azure_janus_fig3_std_vs_mean.png",
                f"{RESULTS}/figures/azure_janus_fig4_centroids.png",
                f"{RESULTS}/figures/azure_janus_fig5_totals.png",
                f"{RESULTS}/figures/azure_janus_fig6_percentiles.png",
                f"{RESULTS}/figures/azure_periodic_packing.png",
                f"{RESULTS}/tables/azure_admission.csv",
                f"{RESULTS}/tables/azure_placement.csv",
                *([f"{RESULTS}/tables/azure_packing_summary.csv", f"{RESULTS}/figures/azure_packing_fig8_m_vs_q.png"]
                  if PACKING_ON else []),
                f"{RESULTS}/tables/cross_trace.csv",
                f"{RESULTS}/figures/cross_trace.png",
            ],
        )
    )
    SUMMARY_PARTS.append((AZ_TABLES, f"{RESULTS}/summary/azure_periodicity.csv"))
    SUMMARY_PARTS.append((AZ_TABLES, f"{RESULTS}/summary/azure_unuvar.csv"))
    SUMMARY_PARTS.append((AZ_TABLES, f"{RESULTS}/summary/azure_janus.csv"))
    SUMMARY_PARTS.append((AZ_TABLES, f"{RESULTS}/summary/azure_total_usage.csv"))
    SUMMARY_PARTS.append((AZ_TABLES, f"{RESULTS}/summary/azure_periodic_packing.csv"))
    SUMMARY_PARTS.append((AZ_TABLES, f"{RESULTS}/summary/azure_admission.csv"))
    SUMMARY_PARTS.append((AZ_TABLES, f"{RESULTS}/summary/azure_placement.csv"))
    if PACKING_ON:
        SUMMARY_PARTS.append((AZ_TABLES, f"{RESULTS}/summary/azure_packing.csv"))

if SRC.name == "azure":
    _download.check_url(SRC.url, what="config key trace.azure.url")

    rule download_azure:
        output:
            f"{TRACE_ROOT}/{{table}}/{{stem}}.csv.gz",
        wildcard_constraints:
            table="vm_cpu_readings|vmtable",
            stem=r"vm_cpu_readings-file-\d+-of-\d+|vmtable",
        params:
            url=lambda wc: f"{SRC.url}/trace_data/{_azure.relpath(wc.table, wc.stem)}",
            relpath=lambda wc: _azure.relpath(wc.table, wc.stem),
            table=lambda wc: wc.table,
            lock=SRC.config["lock"] or f"{TRACE_ROOT}.lock.tsv",
            retries=config["trace"]["retries"],
            backoff=config["trace"]["backoff"],
        log:
            f"{TRACE_ROOT}/logs/download/{{table}}/{{stem}}.log",
        benchmark:
            f"{TRACE_ROOT}/logs/download/{{table}}/{{stem}}.tsv"
        threads: 1
        resources:
            # streaming to disk, then the first download's schema check reads the file (a readings file of
            # ~10 M rows: 1.4 GB, bench/azure_readings.py)
            mem_mb=2000,
            runtime=120,
        conda:
            "../../environment.yml"
        script:
            "../scripts/trace_download_azure.py"


if AZURE:

    rule azure_map_readings:
        input:
            readings=lambda wc: trace_file("vm_cpu_readings", wc.stem),
        output:
            f"{RESULTS}/azure/map/{{stem}}.parquet",
        wildcard_constraints:
            stem="|".join(re.escape(s) for s in AZ_READINGS),
        params:
            buckets=len(BUCKETS),
            code=code_digest("trace.azure", "io"),
        log:
            f"{RESULTS}/logs/azure/map/{{stem}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/map/{{stem}}.tsv"
        threads: 1
        resources:
            # the file's rows read whole, bucketed and written: peaks 199 MB for the 5.3 MB sample, 2,354 MB for a
            # real-size file (805 MB gz, 10 M rows of 227,280 VMs; bench/azure_readings.py), × 1.2
            mem_mb=fitted_mem(222, 3.25),
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_map_readings.py"

    rule azure_reduce_bucket:
        input:
            records=expand(f"{RESULTS}/azure/map/{{stem}}.parquet", stem=AZ_READINGS),
        output:
            series=f"{RESULTS}/azure/reduce/bucket-{{bucket}}/series.parquet",
            vms=f"{RESULTS}/azure/reduce/bucket-{{bucket}}/vms.parquet",
        wildcard_constraints:
            bucket=r"\d+",
        params:
            bucket=lambda wc: int(wc.bucket),
            code=code_digest("trace.azure", "io"),
        log:
            f"{RESULTS}/logs/azure/reduce/{{bucket}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/reduce/{{bucket}}.tsv"
        threads: 1
        resources:
            # 1/B of every map output, sorted and summarised
            # ~450 B a record: peaks 166 MB for a bucket of the 20-VM sample (43 k records), 2,242 MB for 5.0 M
            # records of 113,896 VMs (half of a real-size file); × 1.2. V2 whole at B = 256 is ~7.6 M records a
            # bucket (~4 GB): set mapreduce.buckets to 512 for it
            mem_mb=lambda wc, input: int(1.2 * (160 + 450 * parquet_rows(input.records) / len(BUCKETS) / 2**20)),
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_reduce_bucket.py"

    rule azure_vmtable:
        input:
            vmtable=[trace_file("vmtable", s) for s in shard_stems("vmtable")],
        output:
            f"{RESULTS}/azure/vmtable.parquet",
        params:
            code=code_digest("trace.azure", "io"),
        log:
            f"{RESULTS}/logs/azure/vmtable.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/vmtable.tsv"
        threads: 1
        resources:
            # V2's vmtable: 2.7 M rows of three 64-character ids (~250 B a row in memory)
            mem_mb=fitted_mem(150, 5),  # (peak 120 MB for the sample's 20 rows)
            runtime=10,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_vmtable.py"

    rule azure_periodicity:
        input:
            vms=expand(f"{RESULTS}/azure/reduce/bucket-{{bucket}}/vms.parquet", bucket=BUCKETS),
            series=expand(f"{RESULTS}/azure/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS),
            vmtable=f"{RESULTS}/azure/vmtable.parquet",
        output:
            components=f"{RESULTS}/azure/periodicity/components.parquet",
            windows=f"{RESULTS}/azure/periodicity/windows.parquet",
            spectra=f"{RESULTS}/azure/periodicity/spectra.parquet",
            table4=report(
                f"{RESULTS}/tables/azure_table4_fourier.csv",
                caption="../report/azure_table4.rst",
                category=AZ_CATEGORY,
            ),
            weekly=f"{RESULTS}/tables/azure_weekly_shape.csv",
            phases=report(
                f"{RESULTS}/tables/azure_daily_phases.csv",
                caption="../report/azure_table4.rst",
                category=AZ_CATEGORY,
            ),
            summary=f"{RESULTS}/summary/azure_periodicity.csv",
        params:
            trace=AZ_TRACE,
            min_coverage=AZ["periodicity"]["min_coverage"],
            max_vms=AZ["periodicity"]["max_vms"],
            seed=AZ["periodicity"]["seed"],
            significance_ratio=PE["significance_ratio"],
            strong_ratio=PE["strong_ratio"],
            phase_min_ratio=PE["phase_min_ratio"],
            phase_limits_deg=PE["phase_limits_deg"],
            spectra_jobs=PE["spectra_jobs"],
            code=code_digest("insufficient", "trace.azure", "analysis.periodicity", "report.summary", "io"),
        log:
            f"{RESULTS}/logs/azure/periodicity.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/periodicity.tsv"
        threads: 1
        resources:
            # one bucket's series at a time, then the chosen VMs' series: 8,640 float64 slots a VM (69 kB), a few
            # copies while decomposing
            # (at most max_vms of the VMs: peak 257 MB for the 20-VM sample)
            mem_mb=lambda wc, input: int(290 + 4 * min(AZ["periodicity"]["max_vms"], parquet_rows(input.vms)) * 8640 * 8 / 2**20
                                         + 3 * size_mb(input.series) / max(len(BUCKETS), 1)),
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_periodicity.py"

    rule azure_periodicity_figure:
        input:
            components=f"{RESULTS}/azure/periodicity/components.parquet",
            spectra=f"{RESULTS}/azure/periodicity/spectra.parquet",
            weekly=f"{RESULTS}/tables/azure_weekly_shape.csv",
            phases=f"{RESULTS}/tables/azure_daily_phases.csv",
        output:
            report(
                f"{RESULTS}/figures/azure_fourier_spectra.png",
                caption="../report/azure_table4.rst",
                category=AZ_CATEGORY,
            ),
        params:
            significance_ratio=PE["significance_ratio"],
            phase_limits_deg=PE["phase_limits_deg"],
            code=code_digest("insufficient", "figures.periodicity", "figures.__init__"),
        log:
            f"{RESULTS}/logs/azure/periodicity_figure.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/periodicity_figure.tsv"
        threads: 1
        resources:
            mem_mb=500,
            runtime=5,
        conda:
            "../../environment.yml"
        script:
            "../scripts/periodicity_figure.py"

    rule azure_unuvar:
        input:
            series=expand(f"{RESULTS}/azure/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS),
            vmtable=f"{RESULTS}/azure/vmtable.parquet",
        output:
            aggregates=f"{RESULTS}/azure/unuvar/aggregates.parquet",
            sources=report(
                f"{RESULTS}/tables/azure_unuvar_sets.csv",
                caption="../report/azure_unuvar.rst",
                category=AZ_CATEGORY,
            ),
            statistics=f"{RESULTS}/tables/azure_unuvar_statistics.csv",
            ks=report(
                f"{RESULTS}/tables/azure_unuvar_ks.csv",
                caption="../report/azure_unuvar.rst",
                category=AZ_CATEGORY,
            ),
            overutilisation=f"{RESULTS}/tables/azure_unuvar_overutilisation.csv",
            models=f"{RESULTS}/tables/azure_unuvar_gaussian_vs_beta.csv",
            figure=report(
                f"{RESULTS}/figures/azure_unuvar_beta_fit.png",
                caption="../report/azure_unuvar.rst",
                category=AZ_CATEGORY,
            ),
            summary=f"{RESULTS}/summary/azure_unuvar.csv",
        params:
            trace=AZ_TRACE,
            sizes=AZ["unuvar"]["sizes"],
            job_cap=AZ["unuvar"]["job_cap"],
            seed=AZ["unuvar"]["seed"],
            observations=config["characterise"]["unuvar"]["observations"],
            peak=config["characterise"]["unuvar"]["peak"],
            threshold=config["characterise"]["unuvar"]["threshold"],
            tail_thresholds=config["characterise"]["unuvar"]["tail_thresholds"],
            alpha=config["characterise"]["alpha"],
            code=code_digest("insufficient", "trace.azure", "analysis.aggregate", "analysis.betafit",
                             "analysis.characterise", "figures.characterise", "report.summary", "io"),
        log:
            f"{RESULTS}/logs/azure/unuvar.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/unuvar.tsv"
        threads: 1
        resources:
            # a bucket's series at a time, then the sets' records (~100 B a VM and slot), as unuvar_aggregates
            # (peak 336 MB for the 20-VM sample's 18-VM set)
            mem_mb=lambda wc, input: int(1.4 * (250 + min(max(AZ["unuvar"]["sizes"]), parquet_rows(input.vmtable)) * 8640 * 100 / 2**20
                                                + 3 * size_mb(input.series) / max(len(BUCKETS), 1))),
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_unuvar.py"

    rule azure_cross_trace:
        input:
            parts=[f"{RESULTS}/summary/azure_{name}.csv" for name in ("periodicity", "unuvar", "janus", "total_usage", "admission", "placement")]
            + ([f"{RESULTS}/summary/azure_packing.csv"] if PACKING_ON else []),
            # the Google run compared with (azure.compare_with): read when it exists, never built from here
            google=lambda wc: [p] if AZ["compare_with"] and Path(p := f"results/{AZ['compare_with']}/summary.csv").exists() else [],
        output:
            table=report(
                f"{RESULTS}/tables/cross_trace.csv",
                caption="../report/cross_trace.rst",
                category=AZ_CATEGORY,
            ),
            figure=report(
                f"{RESULTS}/figures/cross_trace.png",
                caption="../report/cross_trace.rst",
                category=AZ_CATEGORY,
            ),
            section=f"{RESULTS}/summary/cross_trace.md",
        params:
            run=RUN,
            google_run=AZ["compare_with"],
            code=code_digest("insufficient", "report.cross_trace", "report.summary", "figures.cross_trace", "figures.__init__"),
        log:
            f"{RESULTS}/logs/azure/cross_trace.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/cross_trace.tsv"
        threads: 1
        resources:
            mem_mb=400,
            runtime=5,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_cross_trace.py"

    rule azure_janus:
        input:
            vms=expand(f"{RESULTS}/azure/reduce/bucket-{{bucket}}/vms.parquet", bucket=BUCKETS),
        output:
            fig2_table=f"{RESULTS}/tables/azure_janus_fig2_std.csv",
            fig2=report(
                f"{RESULTS}/figures/azure_janus_fig2_std_cdf.png",
                caption="../report/azure_janus.rst",
                category=AZ_CATEGORY,
            ),
            fig3_table=report(
                f"{RESULTS}/tables/azure_janus_fig3_trend_lines.csv",
                caption="../report/azure_janus.rst",
                category=AZ_CATEGORY,
            ),
            fig3=report(
                f"{RESULTS}/figures/azure_janus_fig3_std_vs_mean.png",
                caption="../report/azure_janus.rst",
                category=AZ_CATEGORY,
            ),
            shares=f"{RESULTS}/tables/azure_janus_fig4_shares.csv",
            fig4=report(
                f"{RESULTS}/figures/azure_janus_fig4_centroids.png",
                caption="../report/azure_janus.rst",
                category=AZ_CATEGORY,
            ),
            summary=f"{RESULTS}/summary/azure_janus.csv",
        params:
            trace=AZ_TRACE,
            long_min_records=config["mapreduce"]["long_min_records"],
            alpha=config["characterise"]["alpha"],
            bins=config["characterise"]["janus"]["heatmap_bins"],
            quantile=config["characterise"]["janus"]["heatmap_quantile"],
            k=config["characterise"]["janus"]["kmeans_k"],
            n_init=config["characterise"]["janus"]["kmeans_n_init"],
            seed=config["characterise"]["seed"],
            code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__",
                             "report.cross_trace", "report.summary"),
        log:
            f"{RESULTS}/logs/azure/janus.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/janus.tsv"
        threads: 2
        resources:
            # every VM's statistics and its 100-bin histogram (~0.9 KB a VM in the frame and the float64 matrix)
            mem_mb=fitted_mem(500, 6),
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_janus.py"

    rule azure_periodic_packing:
        input:
            components=f"{RESULTS}/azure/periodicity/components.parquet",
            windows=f"{RESULTS}/azure/periodicity/windows.parquet",
        output:
            table=report(
                f"{RESULTS}/tables/azure_periodic_packing.csv",
                caption="../report/azure_periodic_packing.rst",
                category=AZ_CATEGORY,
            ),
            loads=f"{RESULTS}/azure/periodicity/packing_loads.parquet",
            summary=f"{RESULTS}/summary/azure_periodic_packing.csv",
        params:
            trace=AZ_TRACE,
            capacities=AZ["periodic_packing"]["capacities"],
            sample_points=PE_PACK["sample_points"],
            code=code_digest("insufficient", "scheduling.periodic_packing", "analysis.periodicity", "report.summary", "io"),
        log:
            f"{RESULTS}/logs/azure/periodic_packing.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/periodic_packing.tsv"
        threads: 1
        resources:
            # the chosen VMs' series (8,640 float64 slots a VM) and the machines' load series
            # (peak 217 MB for the 20-VM sample)
            mem_mb=lambda wc, input: int(250 + 3 * parquet_rows(input.components) * 8640 * 8 / 2**20),
            runtime=20,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_periodic_packing.py"

    rule azure_periodic_packing_figure:
        input:
            table=f"{RESULTS}/tables/azure_periodic_packing.csv",
            loads=f"{RESULTS}/azure/periodicity/packing_loads.parquet",
        output:
            report(
                f"{RESULTS}/figures/azure_periodic_packing.png",
                caption="../report/azure_periodic_packing.rst",
                category=AZ_CATEGORY,
            ),
        params:
            capacity_unit="cores",
            code=code_digest("insufficient", "figures.periodicity", "figures.__init__"),
        log:
            f"{RESULTS}/logs/azure/periodic_packing_figure.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/periodic_packing_figure.tsv"
        threads: 1
        resources:
            mem_mb=500,
            runtime=5,
        conda:
            "../../environment.yml"
        script:
            "../scripts/periodicity_packing_figure.py"

    rule azure_admission:
        input:
            series=expand(f"{RESULTS}/azure/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS),
            vmtable=f"{RESULTS}/azure/vmtable.parquet",
        output:
            table=report(
                f"{RESULTS}/tables/azure_admission.csv",
                caption="../report/azure_admission.rst",
                category=AZ_CATEGORY,
            ),
            replicates=f"{RESULTS}/tables/azure_admission_replicates.csv",
            summary=f"{RESULTS}/summary/azure_admission.csv",
        params:
            trace=AZ_TRACE,
            mean_running=AZ["admission"]["mean_running"],
            job_cap=AZ["unuvar"]["job_cap"],
            threshold=config["packing"]["admission"]["threshold"],
            eps=config["packing"]["admission"]["eps"],
            peak_utilisation=config["packing"]["admission"]["peak_utilisation"],
            peak_quantile=config["packing"]["admission"]["peak_quantile"],
            seed=config["packing"]["admission"]["seed"],
            replicates=config["packing"]["admission"]["replicates"],
            estimator=config["packing"]["admission"]["estimator"],
            history=config["packing"]["admission"]["history_windows"],
            code=code_digest("insufficient", "trace.azure", "scheduling.admission", "analysis.aggregate",
                             "report.cross_trace", "report.summary"),
        log:
            f"{RESULTS}/logs/azure/admission.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/admission.tsv"
        threads: 1
        resources:
            # a bucket's series at a time and one set's records (~100 B a VM and slot), as admission_control
            mem_mb=lambda wc, input: int(1.4 * (250 + min(AZ["admission"]["mean_running"], parquet_rows(input.vmtable)) * 8640 * 100 / 2**20
                                                + 3 * size_mb(input.series) / max(len(BUCKETS), 1))),
            runtime=30,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_admission.py"

    rule azure_placement:
        input:
            vmtable=f"{RESULTS}/azure/vmtable.parquet",
        output:
            log=f"{RESULTS}/azure/placement/log.parquet",
            table=report(
                f"{RESULTS}/tables/azure_placement.csv",
                caption="../report/azure_placement.rst",
                category=AZ_CATEGORY,
            ),
            figure=report(
                f"{RESULTS}/figures/azure_placement.png",
                caption="../report/azure_placement.rst",
                category=AZ_CATEGORY,
            ),
            summary=f"{RESULTS}/summary/azure_placement.csv",
        params:
            trace=AZ_TRACE,
            hosts=AZ["placement"]["hosts"],
            host_cores=AZ["placement"]["host_cores"],
            host_memory_gb=AZ["placement"]["host_memory_gb"],
            requests=PLACEMENT_CFG["trace"]["requests"],
            offered_cpu_load=PLACEMENT_CFG["trace"]["offered_cpu_load"],
            specs=PLACEMENT_TRACE_SPECS,
            seed=PLACEMENT_CFG["trace"]["seed"],
            alpha=PLACEMENT_CFG["alpha"],
            tie_break=PLACEMENT_CFG["tie_break"],
            warmup=PLACEMENT_CFG["trace"]["warmup"],
            code=code_digest("insufficient", "trace.azure", *PLACEMENT_CODE, "scheduling.placement_analysis",
                             "scheduling.placement_workload", "figures/placement", "report.summary", "io")
            + PLACEMENT_PLUGINS,
        log:
            f"{RESULTS}/logs/azure/placement.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/placement.tsv"
        threads: 1
        resources:
            # the vmtable (~250 B a VM) and placement.trace.requests requests on the hosts, as placement_trace_run
            mem_mb=lambda wc, input: int(450 + 1.2 * 250 * parquet_rows(input.vmtable) / 2**20),
            runtime=15,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_placement.py"

    rule azure_realizations:
        input:
            vms=expand(f"{RESULTS}/azure/reduce/bucket-{{bucket}}/vms.parquet", bucket=BUCKETS),
            series=expand(f"{RESULTS}/azure/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS),
            vmtable=f"{RESULTS}/azure/vmtable.parquet",
        output:
            inst=f"{RESULTS}/azure/realizations/inst.npy",
            avg=f"{RESULTS}/azure/realizations/avg.npy",
            tasks=f"{RESULTS}/azure/realizations/tasks.parquet",
        params:
            long_min_records=config["mapreduce"]["long_min_records"],
            n_tasks=config["realizations"]["n_tasks"],
            n_realizations=config["realizations"]["n_realizations"],
            chunk_tasks=config["realizations"]["chunk_tasks"],
            seed=config["realizations"]["seed"],
            code=code_digest("insufficient", "trace.azure", "prep.realizations", "io"),
        log:
            f"{RESULTS}/logs/azure/realizations.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/realizations.tsv"
        threads: 1
        resources:
            # every VM's statistics (six of vms.parquet's columns, not its histograms), one bucket's series (three
            # times while joined to the VMs) and one chunk of draws; the matrices are written through a memory map.
            # Peak 152 MB on the 20-VM sample (bench/memory.py)
            mem_mb=lambda wc, input: int(200 + size_mb(input.vms) + 3 * size_mb(input.series) / max(len(BUCKETS), 1)
                                         + config["realizations"]["chunk_tasks"] * config["realizations"]["n_realizations"] * 8 / 2**20),
            runtime=60,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_realizations.py"

    rule azure_packing:
        input:
            inst=f"{RESULTS}/azure/realizations/inst.npy",
            avg=f"{RESULTS}/azure/realizations/avg.npy",
            tasks=f"{RESULTS}/azure/realizations/tasks.parquet",
        output:
            table=f"{RESULTS}/azure/packing/results.parquet",
            csv=report(
                f"{RESULTS}/tables/azure_packing_summary.csv",
                caption="../report/azure_packing.rst",
                category=AZ_CATEGORY,
            ),
            summary=f"{RESULTS}/summary/azure_packing.csv",
        params:
            trace=AZ_TRACE,
            host_cores=AZ["placement"]["host_cores"],
            seed=PK["seed"],
            instances=PK.get("instances"),
            tasks_per_instance=PK.get("tasks_per_instance"),
            max_failures=PK["max_failures"],
            cells=PACKING_CELLS.to_dicts(),
            fit_options={key: PK[key] for key in _fit_tests.FIT_OPTIONS},
            estimator_options=PACKING_ESTIMATOR_OPTIONS,
            code=code_digest("insufficient", "report.summary", *PACKING_CODE) + plugin_digest(*PACKING_ESTIMATORS),
        log:
            f"{RESULTS}/logs/azure/packing.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/packing.tsv"
        threads: 1
        resources:
            # the inst and avg matrices as shares of a host, in memory
            mem_mb=lambda wc, input: int(400 + 2 * size_mb([input.inst, input.avg])),
            runtime=120,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_packing.py"

    rule azure_packing_figures:
        input:
            table=f"{RESULTS}/azure/packing/results.parquet",
        output:
            **{
                key: report(
                    f"{RESULTS}/figures/azure_{name}.png",
                    caption="../report/azure_packing.rst",
                    category=AZ_CATEGORY,
                )
                for key, name in PACKING_FIGURES.items()
            },
        params:
            note=f"Azure VMs: inst is each VM's 5-minute max (Azure records no instantaneous sample); "
            f"a machine is a host of {AZ['placement']['host_cores']} cores",
            code=code_digest("insufficient", "figures.packing", "scheduling.packing_grid"),
        log:
            f"{RESULTS}/logs/azure/packing_figures.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/packing_figures.tsv"
        threads: 1
        resources:
            mem_mb=550,  # as packing_figures: peak 356 MB on Google's grid
            runtime=10,
        conda:
            "../../environment.yml"
        script:
            "../scripts/packing_figures.py"

    rule azure_total_usage:
        input:
            inst=f"{RESULTS}/azure/realizations/inst.npy",
            tasks=f"{RESULTS}/azure/realizations/tasks.parquet",
            # read only when Table 1's R exceeds the matrix's: the VMs' realizations are drawn again
            series=expand(f"{RESULTS}/azure/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS),
            vmtable=f"{RESULTS}/azure/vmtable.parquet",
        output:
            table1=report(
                f"{RESULTS}/tables/azure_janus_table1_normality.csv",
                caption="../report/azure_total_usage.rst",
                category=AZ_CATEGORY,
            ),
            fig5_table=f"{RESULTS}/tables/azure_janus_fig5_totals.csv",
            fig5=report(
                f"{RESULTS}/figures/azure_janus_fig5_totals.png",
                caption="../report/azure_total_usage.rst",
                category=AZ_CATEGORY,
            ),
            fig6_table=f"{RESULTS}/tables/azure_janus_fig6_percentiles.csv",
            fig6=report(
                f"{RESULTS}/figures/azure_janus_fig6_percentiles.png",
                caption="../report/azure_total_usage.rst",
                category=AZ_CATEGORY,
            ),
            summary=f"{RESULTS}/summary/azure_total_usage.csv",
        params:
            trace=AZ_TRACE,
            table1_sizes=config["characterise"]["janus"]["table1_sizes"],
            fig5_sizes=config["characterise"]["janus"]["fig5_sizes"],
            fig6_sizes=config["characterise"]["janus"]["fig6_sizes"],
            percentiles=config["characterise"]["janus"]["fig6_percentiles"],
            repetitions=config["characterise"]["janus"]["repetitions"],
            table1_realizations=config["characterise"]["janus"]["table1_realizations"],
            alpha=config["characterise"]["alpha"],
            seed=config["characterise"]["seed"],
            code=code_digest("insufficient", "analysis.characterise", "figures.characterise", "figures.__init__",
                             "prep.realizations", "trace.azure", "report.cross_trace", "report.summary"),
        log:
            f"{RESULTS}/logs/azure/total_usage.log",
        benchmark:
            f"{RESULTS}/benchmarks/azure/total_usage.tsv"
        threads: 1
        resources:
            # the matrix, or Table 1's R drawn again a bucket at a time, plus chunks of 8e6 float64 totals
            mem_mb=lambda wc, input: int(600 + size_mb(input.inst) + (
                config["realizations"]["n_tasks"] * config["characterise"]["janus"]["table1_realizations"] * 4 / 2**20
                + 3 * size_mb(input.series) / max(len(BUCKETS), 1)
                if config["characterise"]["janus"]["table1_realizations"] > config["realizations"]["n_realizations"] else 0)),
            runtime=120,
        conda:
            "../../environment.yml"
        script:
            "../scripts/azure_total_usage.py"
