"""The PuLP solver class of :mod:`epochbench.exact._binary` (CBC with a
deadline), in a module of its own because subclassing imports PuLP:
``_binary`` imports this module only when a MILP runs, and this module
imports nothing of the package (the clock is read through the two
functions it is given).  HiGHS gets its models from highspy directly
(:func:`epochbench.exact._binary.highs_model`)."""
from __future__ import annotations

import os
import signal
import subprocess

import pulp


class TimedCBC(pulp.PULP_CBC_CMD):
    """``PULP_CBC_CMD`` (MPS file, ``-sec`` in elapsed time) whose subprocess
    is sent SIGINT when ``wait_s()`` seconds (read once CBC starts) have
    passed, and killed ``grace_s`` seconds later; ``sec()`` gives CBC's own
    limit at that moment.  SIGINT is CBC's Ctrl-C: it stops the search and
    writes its best solution, which is read as any other (CBC overruns its
    own limit by a second or so on some models, and killed at once it lost
    its incumbent and bound: a longer limit gave a worse answer).  ``killed``
    says whether it ended without a solution to read: killed after the
    grace, or ended by the SIGINT itself (``early``: sent before CBC
    installed its handler, in its first milliseconds).  ``crashed``: why CBC died of a
    signal it was not sent here (the bundled CBC 2.10.3 segfaults now and
    then on short limits: 3 of 10 runs of a 40-job epochs model at 0.2 s),
    ``None`` otherwise; no solution is read then either.  A non-zero exit
    status of its own (CBC refusing the model) still raises
    ``PulpSolverError``."""

    def __init__(self, sec, wait_s, grace_s, **kwargs):
        super().__init__(**kwargs)
        self.sec, self.wait_s, self.grace_s, self.killed, self.crashed = sec, wait_s, grace_s, False, None
        self.interrupted = self.early = False

    def solve_CBC(self, lp, use_mps=True):
        tmp_mps, tmp_sol, tmp_mst = self.create_tmp_files(lp.name, "mps", "sol", "mst")
        try:
            vs, var_names, con_names, _ = lp.writeMPS(tmp_mps, rename=1)
            args = [self.path, tmp_mps] + (["-max"] if lp.sense == pulp.LpMaximize else [])
            if self.optionsDict.get("warmStart", False):
                self.writesol(tmp_mst, lp, vs, var_names, con_names)
                args += ["-mips", tmp_mst]
            args += ["-sec", f"{self.sec():.3f}"]
            for option in self.options + self.getOptions():
                args += ("-" + option).split()
            args += ["-solve", "-printingOptions", "all", "-solution", tmp_sol]
            with open(self.optionsDict["logPath"], "w") as log:
                proc = subprocess.Popen(args, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
                try:
                    code = _wait(proc, self)
                except BaseException:     # Ctrl-C or SIGTERM to this process alone: CBC ran on to its limit
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
                    raise
            if code == -signal.SIGINT and self.interrupted:   # ours, before CBC took it as Ctrl-C: no solution
                self.killed, self.early = True, True
            if not self.killed and code < 0:          # a signal not sent here (neither SIGINT nor the kill above)
                self.crashed = f"CBC died of signal {_signal_name(-code)} (exit status {code})"
            if self.killed or self.crashed:
                lp.assignStatus(pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound)
                return pulp.LpStatusNotSolved
            if code != 0 or not os.path.exists(tmp_sol):
                raise pulp.PulpSolverError(f"CBC ({self.path}) failed with exit status {code}")
            status, values, dj, pi, slacks, sol_status = self.readsol_MPS(tmp_sol, lp, vs, var_names, con_names)
            lp.assignVarsVals(values)
            lp.assignStatus(status, sol_status)
            return status
        finally:
            self.delete_tmp_files(tmp_mps, tmp_sol, tmp_mst)


def _wait(proc, cbc: TimedCBC) -> int:
    """CBC's exit status: SIGINT after ``cbc.wait_s()`` seconds (stop and
    write the best solution), killed ``cbc.grace_s`` later if it is deaf to
    that (its preprocessing); ``cbc.interrupted`` and ``cbc.killed`` say which."""
    try:
        return proc.wait(timeout=cbc.wait_s())
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        cbc.interrupted = True
    try:
        return proc.wait(timeout=cbc.grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        cbc.killed = True
        return proc.wait()


def _signal_name(number: int) -> str:
    """``SIGSEGV`` for 11, the number itself for one Python does not know."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
