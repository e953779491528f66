"""Tantawi & Steinder on Azure VMs: the vmtable's VMs as a request stream (cores, memory) onto identical hosts."""
import polars as pl

from colocate import io, rulescript
from colocate.scheduling.placement import stream
from colocate.scheduling.placement_workload import placeable, replay_requests
from colocate.sources import azure

ANALYSIS = "Trace-driven placement run (Tantawi & Steinder)"


def main(inputs, outputs, params, log):
    p = params
    nodes = azure.hosts(p.hosts, p.host_cores, p.host_memory_gb)
    cap = nodes.select("cpus", "memory").to_numpy()
    vmtable = pl.read_parquet(inputs.vmtable)
    eligible, too_big = placeable(azure.vm_requests(vmtable, int(vmtable["vmdeleted"].max())), cap)
    requests, facts = replay_requests(eligible, too_big, cap, n_requests=p.requests, offered_load=p.offered_cpu_load,
                                      rng=stream(p.seed, 0, "azure:requests"))
    io.write_parquet(requests, outputs.requests)
    io.write_parquet(nodes, outputs.nodes)
    pl.DataFrame({"quantity": list(facts), "value": list(facts.values())}).write_csv(outputs.facts)
    log.info("%d VMs -> %s", vmtable.height, facts)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
