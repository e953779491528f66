# The Azure Public Dataset VM traces (V1 2017, V2 2019; colocate.sources.azure) as a source: download, the vmtable,
# the map of each readings file to the contract's usage records, with each VM as an entity (its deployment its
# group) in shares of a host of azure.placement.host_cores cores, and the requests and hosts of the trace-driven
# placement. The shared reduce (mapreduce.smk) and every analysis whose needs the traces meet run on them as on
# Google's. Included only on an Azure run.

from colocate.sources import azure as _azure

AZ = config["azure"]
AZ_CATEGORY = "Azure VM traces (issue 16)"
AZ_READINGS = shard_stems("vm_cpu_readings")
#: The source's normaliser: usage and requests are shares of this host (Azure does not publish its hosts).
AZ_HOST = {"cores": AZ["placement"]["host_cores"], "memory_gb": AZ["placement"]["host_memory_gb"]}

# the contract's tables, read by the shared reduce
USAGE_RECORDS = expand(f"{RESULTS}/map/vm_cpu_readings/{{stem}}.parquet", stem=AZ_READINGS)
ENTITY_PIECES = [f"{RESULTS}/map/vmtable/pieces.parquet"]

TARGETS.append((("entities",), [f"{RESULTS}/azure/vmtable.parquet"]))
if isinstance(SRC, _azure.Download) and len(AZ_READINGS) > 8 * len(BUCKETS):
    # a reduce job holds 1/B of every file's records (~450 B each; a V2 file holds ~10 M): warned, not refused
    logger.warning(
        f"colocate: {len(AZ_READINGS)} Azure readings files over {len(BUCKETS)} buckets is "
        f"~{len(AZ_READINGS) * 10e6 * 450 / len(BUCKETS) / 2**30:.1f} GB a reduce job; set "
        "mapreduce.buckets to about files × 2.6 (512 for the whole of V2) to stay near 4 GB"
    )

if isinstance(SRC, _azure.Download):
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
        code=code_digest("sources.azure", "io"),
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
        code=code_digest("sources.azure", "io"),
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


# The trace-driven placement's requests (the vmtable's VMs) and machines (identical hosts: Azure publishes none).
rule azure_placement_requests:
    input:
        vmtable=f"{RESULTS}/azure/vmtable.parquet",
    output:
        requests=f"{RESULTS}/placement/trace/requests.parquet",
        nodes=f"{RESULTS}/placement/trace/nodes.parquet",
        facts=report(
            f"{RESULTS}/tables/placement_trace_workload.csv",
            caption="../report/placement_trace_table.rst",
            category=AZ_CATEGORY,
        ),
    params:
        hosts=AZ["placement"]["hosts"],
        host_cores=AZ_HOST["cores"],
        host_memory_gb=AZ_HOST["memory_gb"],
        requests=config["placement"]["trace"]["requests"],
        offered_cpu_load=config["placement"]["trace"]["offered_cpu_load"],
        seed=config["placement"]["trace"]["seed"],
        code=code_digest("insufficient", "sources.azure", "scheduling.placement", "scheduling.placement_workload", "io"),
    log:
        f"{RESULTS}/logs/azure/placement_requests.log",
    benchmark:
        f"{RESULTS}/benchmarks/azure/placement_requests.tsv"
    threads: 1
    resources:
        # the vmtable (~250 B a VM) as requests
        mem_mb=lambda wc, input: int(450 + 1.2 * 250 * parquet_rows(input.vmtable) / 2**20),
        runtime=15,
    conda:
        "../../environment.yml"
    script:
        "../scripts/azure_placement_requests.py"
