"""Event-driven online simulator: job streams (:mod:`epochbench.instances.jobs`), policies and
machine models on one event engine, and the metrics of :mod:`epochbench.sim.metrics`
(see ARCHITECTURE.md, "Online simulation")."""
