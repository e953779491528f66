# The Azure Public Dataset VM traces (V1 2017, V2 2019; colocate.sources.azure) as a source: download, the vmtable,
# and the map of each readings file to the contract's usage records, with each VM as an entity (its deployment its
# group), in shares of a host of azure.placement.host_cores cores; the shared reduce (mapreduce.smk) and every
# analysis whose needs the traces meet run on them as on Google's. Included only on an Azure run.

from colocate.trace import azure as _azure

AZ = config["azure"]
AZ_NEEDS = ("entities", "usage_series")
AZ_CATEGORY = "Azure VM traces (issue 16)"
AZ_READINGS = shard_stems("vm_cpu_readings")
#: The source's normaliser: usage and requests are shares of this host (Azure does not publish its hosts).
AZ_HOST = {"cores": AZ["placement"]["host_cores"], "memory_gb": AZ["placement"]["host_memory_gb"]}

# the contract's tables, read by the shared reduce
USAGE_RECORDS = expand(f"{RESULTS}/map/vm_cpu_readings/{{stem}}.parquet", stem=AZ_READINGS)
ENTITY_PIECES = [f"{RESULTS}/map/vmtable/pieces.parquet"]

TARGETS.append(
    (
        AZ_NEEDS,
        [
            f"{RESULTS}/azure/vmtable.parquet",
            f"{RESULTS}/tables/azure_table4_fourier.csv",
            f"{RESULTS}/tables/azure_daily_phases.csv",
            f"{RESULTS}/figures/azure_fourier_spectra.png",
            f"{RESULTS}/figures/azure_periodic_packing.png",
            f"{RESULTS}/tables/azure_placement.csv",
        ],
    )
)
SUMMARY_PARTS.append((AZ_NEEDS, f"{RESULTS}/summary/azure_periodicity.csv"))
SUMMARY_PARTS.append((AZ_NEEDS, f"{RESULTS}/summary/azure_periodic_packing.csv"))
SUMMARY_PARTS.append((AZ_NEEDS, f"{RESULTS}/summary/azure_placement.csv"))
if SRC.name == "azure" and len(AZ_READINGS) > 8 * len(BUCKETS):
    # a reduce job holds 1/B of every file's records (~450 B each; a V2 file holds ~10 M): warned, not refused
    logger.warning(
        f"colocate: {len(AZ_READINGS)} Azure readings files over {len(BUCKETS)} buckets is "
        f"~{len(AZ_READINGS) * 10e6 * 450 / len(BUCKETS) / 2**30:.1f} GB a reduce job; set "
        "mapreduce.buckets to about files × 2.6 (512 for the whole of V2) to stay near 4 GB"
    )

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


rule azure_vmtable:
    input:
        vmtable=[trace_file("vmtable", s) for s in shard_stems("vmtable")],
    output:
        table=f"{RESULTS}/azure/vmtable.parquet",
        pieces=f"{RESULTS}/map/vmtable/pieces.parquet",
    params:
        buckets=len(BUCKETS),
        host_cores=AZ_HOST["cores"],
        host_memory_gb=AZ_HOST["memory_gb"],
        code=code_digest("trace.azure", "io"),
    log:
        f"{RESULTS}/logs/azure/vmtable.log",
    benchmark:
        f"{RESULTS}/benchmarks/azure/vmtable.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        # V2's vmtable: 2.7 M rows of three 64-character ids (~250 B a row in memory), then its VMs as entities
        mem_mb=fitted_mem(150, 8),  # (peak 120 MB for the sample's 20 rows)
        runtime=10,
    conda:
        "../../environment.yml"
    script:
        "../scripts/azure_vmtable.py"


rule azure_map_readings:
    input:
        readings=lambda wc: trace_file("vm_cpu_readings", wc.stem),
        vmtable=f"{RESULTS}/azure/vmtable.parquet",
    output:
        f"{RESULTS}/map/vm_cpu_readings/{{stem}}.parquet",
    wildcard_constraints:
        stem="|".join(re.escape(s) for s in AZ_READINGS),
    params:
        buckets=len(BUCKETS),
        host_cores=AZ_HOST["cores"],
        code=code_digest("trace.azure", "io"),
    log:
        f"{RESULTS}/logs/azure/map/{{stem}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/azure/map/{{stem}}.tsv"
    priority: PRIORITY_CRITICAL_PATH
    threads: 1
    resources:
        # the file's rows read whole, keyed, bucketed and written: peaks 199 MB for the 5.3 MB sample, 2,354 MB for a
        # real-size file (805 MB gz, 10 M rows of 227,280 VMs; bench/azure_readings.py), × 1.2; plus the vmtable
        mem_mb=lambda wc, input: int(222 + 3.25 * size_mb(input.readings) + 4 * size_mb(input.vmtable)),
        runtime=30,
    conda:
        "../../environment.yml"
    script:
        "../scripts/azure_map_readings.py"


rule azure_periodicity:
    input:
        series=expand(f"{RESULTS}/reduce/bucket-{{bucket}}/series.parquet", bucket=BUCKETS),
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
        min_coverage=AZ["periodicity"]["min_coverage"],
        max_vms=AZ["periodicity"]["max_vms"],
        seed=AZ["periodicity"]["seed"],
        host_cores=AZ_HOST["cores"],
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
        mem_mb=lambda wc, input: int(290 + 4 * min(AZ["periodicity"]["max_vms"], parquet_rows(input.vmtable)) * 8640 * 8 / 2**20
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

