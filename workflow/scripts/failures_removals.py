"""Machine removals, their durations, the outstanding events and removals per 5-minute window (Beaumont et al. §6)."""
from colocate import io, rulescript
from colocate.analysis import failures


def main(inputs, outputs, params, log):
    p, o = params, outputs
    events = io.read_contract(inputs.events, "machine_events")
    facts = failures.event_counts(events, p.n_windows)
    criterion = failures.OutstandingCriterion(**{k: p.outstanding[k] for k in ("together_s", "min_readds", "cycle_uptime_s", "flapping_min_cycles")})
    rem, episodes = failures.detect_outstanding(failures.removals(events, p.n_windows), criterion)
    counts = failures.window_counts(rem, p.n_windows, p.maintenance_min_removals)
    rem.write_parquet(o.removals)
    counts.write_parquet(o.windows)
    facts.write_csv(o.facts)
    episodes.write_parquet(o.all_episodes)
    failures.episode_report(episodes, p.outstanding["others_listed"]).write_csv(o.episodes)
    log.info("%s: %s", ", ".join(map(str, inputs.events)), facts.row(0, named=True))
    log.info("%d outstanding events (%s); %d maintenance windows", int(episodes["outstanding"].sum()), criterion, int(counts["maintenance"].sum()))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
