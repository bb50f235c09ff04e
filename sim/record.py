"""Per-epoch recording (issue 4 item 3): every selection step of a policy as
a ``packing`` instance, with the choice the policy made.

A selection step is the packing problem the policy solves at a scheduling
pass: the machine with what is free after the queue head's starts, the
candidates in queue order and, for EASY-style policies, the head's
reservation (shadow time and extra resources).  :class:`EpochRecorder` is an
``on_pass`` hook of :class:`sim.engine.Engine`; its instances carry
``meta["choice"]`` (candidate positions of the jobs the policy started, in
start order), so the ``recorded`` packing method replays the policy's own
choice and ``epochbench score`` puts it next to the exact optimum.
"""
from __future__ import annotations

from pathlib import Path

from instances.io import write_family

from .engine import Policy, packing_instance


class EpochRecorder:
    """``on_pass`` hook recording ``policy``'s selection steps.

    ``min_candidates``: skip steps with fewer candidates (a step with none
    has nothing to decide); ``limit``: stop recording after that many."""

    def __init__(self, policy: Policy, *, label: str = "", min_candidates: int = 1,
                 limit: int | None = None):
        if not getattr(policy, "has_selector", False):
            raise ValueError(f"policy {policy.name!r} has no packing selection step to record")
        self.policy, self.label = policy, label
        self.min_candidates, self.limit = min_candidates, limit
        self.instances: list = []
        self.passes = 0

    def __call__(self, now, machine, queue, started) -> None:
        self.passes += 1
        step = self.policy.step
        if step is None or len(step.candidates) < self.min_candidates:
            return
        if self.limit is not None and len(self.instances) >= self.limit:
            return
        tb = self.policy.table
        pos = {j: i for i, j in enumerate(step.candidates)}
        choice = [pos[j] for j in started if j in pos]
        meta = {"name": f"{self.label}epoch{len(self.instances):06d}", "choice": choice,
                "policy": self.policy.name, "selector": getattr(self.policy, "selector", None),
                "time": float(now), "job_ids": [int(tb.ids[j]) for j in step.candidates]}
        self.instances.append(packing_instance(tb, machine.capacity, step.free, step.candidates,
                                               now=now, shadow=step.shadow, extra=step.extra,
                                               meta=meta))

    def write(self, folder, **params) -> Path:
        """The recorded steps as a family folder (``manifest.json`` + one
        JSON file per step)."""
        if not self.instances:
            raise ValueError(f"policy {self.policy.name!r} made no selection step with "
                             f">= {self.min_candidates} candidate(s): nothing to record")
        return write_family(folder, self.instances, generator="record-epochs",
                            params={"policy": self.policy.name, "passes": self.passes, **params})


def choice_of(inst) -> list[int]:
    """The recorded choice of an instance written by :class:`EpochRecorder`."""
    try:
        return [int(i) for i in inst.meta["choice"]]
    except KeyError:
        raise KeyError(f"{inst.name}: no recorded choice (meta['choice']); record it with "
                       "epochbench simulate --record-epochs") from None


__all__ = ["EpochRecorder", "choice_of"]
