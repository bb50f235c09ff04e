"""Event-driven online simulator: job streams (:mod:`sim.jobs`), policies and
machine models on one event engine, and the metrics of :mod:`sim.metrics`
(see ARCHITECTURE.md, "Online simulation")."""
