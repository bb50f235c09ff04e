"""The bibliography: the five source papers and every other work the code
cites.  Docstrings cite by key in brackets, with a section, equation or
figure, e.g. ``[leinberger1999] section 2.2``; :func:`cite` formats an
entry, :func:`markdown` writes ``docs/references.md``.

The five source papers of the specification (the ``seeds``) are
:data:`SEEDS`; their texts are not distributed with the package.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    """One work: ``key`` (what docstrings cite), authors, title, where it
    appeared, year (None when the text carries none), DOI or URL where
    known, and a note on what epochbench takes from it."""

    key: str
    authors: str
    title: str
    venue: str
    year: int | None = None
    doi: str = ""
    url: str = ""
    note: str = ""


_R = Reference
REFERENCES: dict[str, Reference] = {r.key: r for r in [
    # ---- the five source papers (the specification) ----
    _R("leinberger1999", "W. Leinberger, G. Karypis, V. Kumar",
       "Job Scheduling in the Presence of Multiple Resource Requirements",
       "Technical Report TR 99-025 (revised May 27, 1999), Department of Computer Science and Engineering, "
       "University of Minnesota", 1999,
       note="K-resource packing per epoch; FCFS, FF, BL, BB and the fullness modifier; FF/BL/BB-EASY and "
            "FF-CONS; the K-extended Feitelson workload; fig. 1 worked example"),
    _R("rajaei-dadfar", "H. Rajaei, M. B. Dadfar", "Job Scheduling in Cluster Computing as a Student Project",
       "Department of Computer Science, Bowling Green State University (the text carries no date or venue)",
       note="Non-FCFS with a starvation limit, EASY and conservative backfilling; tables 1-4 worked examples; "
            "the workload generator; tables 5-6 (7-8 run on an input it does not give)"),
    _R("vadhiyar-notes", "S. Vadhiyar", "Scheduling on Parallel Systems",
       "lecture notes, Supercomputer Education and Research Centre, Indian Institute of Science (undated)",
       note="FCFS, EASY, conservative backfilling and its variants; LOS (algorithms 1 and 2, table 2); gang "
            "scheduling; OLB, UDA, Min-Min, Max-Min, GA, SA, tabu search for ETC mapping"),
    _R("capannini2007", "G. Capannini, R. Baraglia, D. Puppin, L. Ricci, M. Pasquali",
       "A Job Scheduling Framework for Large Computing Farms",
       "Proceedings of the ACM/IEEE Conference on Supercomputing (SC '07), Reno", 2007,
       doi="10.1145/1362622.1362686",
       note="convergent scheduling; license clustering and the greedy MKP; MIS, MFS, IMFS matching; EDF, EASY "
            "and flexible backfilling baselines; table 1"),
    _R("zhang-comparative", "Y. Zhang, H. Franke, J. E. Moreira, A. Sivasubramaniam",
       "A Comparative Analysis of Space- and Time-Sharing Techniques for Parallel Job Scheduling in Large "
       "Scale Parallel Systems",
       "manuscript, The Pennsylvania State University and IBM T. J. Watson Research Center (undated)",
       note="hyper-Erlang workload modelling; Omega and Phi overestimation; FCFS/SJF/BFit/WFit with "
            "backfilling; GS, BGS, MGS, MBGS; bounded slowdown, utilization, capacity loss (eqs. 1-5)"),
    # ---- other works the code cites ----
    _R("braun2001", "T. D. Braun, H. J. Siegel, N. Beck, L. L. Bölöni, M. Maheswaran, A. I. Reuther, "
       "J. P. Robertson, M. D. Theys, B. Yao, D. Hensgen, R. F. Freund",
       "A Comparison of Eleven Static Heuristics for Mapping a Class of Independent Tasks onto Heterogeneous "
       "Distributed Computing Systems", "Journal of Parallel and Distributed Computing 61(6):810-837", 2001,
       doi="10.1006/jpdc.2000.1714", note="the ETC model, the 12 benchmark matrices, MCT, Duplex, GA / SA / tabu "
                                           "settings"),
    _R("maheswaran1999", "M. Maheswaran, S. Ali, H. J. Siegel, D. Hensgen, R. F. Freund",
       "Dynamic Mapping of a Class of Independent Tasks onto Heterogeneous Computing Systems",
       "Journal of Parallel and Distributed Computing 59(2):107-131", 1999, doi="10.1006/jpdc.1999.1581",
       note="Sufferage"),
    _R("gogos2016", "C. Gogos, C. Valouxis, P. Alefragis, G. Goulas, N. Voros, E. Housos",
       "Scheduling Independent Tasks on Heterogeneous Processors Using Heuristics and Column Pricing",
       "Future Generation Computer Systems 60:48-66", 2016, doi="10.1016/j.future.2016.01.016",
       note="best known makespans of the Braun matrices"),
    _R("fanjulpeyro2011", "L. Fanjul-Peyro, R. Ruiz",
       "Size-reduction heuristics for the unrelated parallel machines scheduling problem",
       "Computers & Operations Research 38(1):301-309", 2011, doi="10.1016/j.cor.2010.05.005",
       note="the size-reduced first phase of the mapping LNS (few machines per task)"),
    _R("angelelli2010", "E. Angelelli, R. Mansini, M. G. Speranza",
       "Kernel search: a general heuristic for the multi-dimensional knapsack problem",
       "Computers & Operations Research 37(11):2017-2026", 2010, doi="10.1016/j.cor.2010.02.002",
       note="the kernel search of the mapping LNS (the pairs of small LP reduced cost)"),
    _R("martello1997", "S. Martello, F. Soumis, P. Toth",
       "Exact and Approximation Algorithms for Makespan Minimization on Unrelated Parallel Machines",
       "Discrete Applied Mathematics 75(2):169-188", 1997, doi="10.1016/S0166-218X(96)00087-X",
       note="the per-machine knapsack pricing of the mapping branch-and-price"),
    _R("martello1990", "S. Martello, P. Toth", "Knapsack Problems: Algorithms and Computer Implementations",
       "John Wiley & Sons, Chichester", 1990,
       note="the L2 bound of bin packing; the Dantzig and surrogate bounds of the mkp-bb oracle"),
    _R("kellerer2004", "H. Kellerer, U. Pferschy, D. Pisinger", "Knapsack Problems", "Springer, Berlin", 2004,
       doi="10.1007/978-3-540-24777-7",
       note="multidimensional knapsack bounds and branch-and-bound (the mkp-bb oracle)"),
    _R("chvatal1983", "V. Chvatal", "Linear Programming", "W. H. Freeman, New York", 1983,
       note="the bounded-variable simplex (chapter 8) of the mkp-bb oracle's node LP"),
    _R("nemhauser1988", "G. L. Nemhauser, L. A. Wolsey", "Integer and Combinatorial Optimization",
       "John Wiley & Sons, New York", 1988, note="reduced-cost fixing at the nodes of the mkp-bb oracle"),
    _R("vimont2008", "Y. Vimont, S. Boussier, M. Vasquez",
       "Reduced costs propagation in an efficient implicit enumeration for the 01 multidimensional knapsack "
       "problem", "Journal of Combinatorial Optimization 15(2):165-178", 2008,
       note="reduced-cost fixing in a multidimensional knapsack enumeration (the mkp-bb oracle)"),
    _R("gilmore1961", "P. C. Gilmore, R. E. Gomory", "A Linear Programming Approach to the Cutting-Stock Problem",
       "Operations Research 9(6):849-859", 1961, doi="10.1287/opre.9.6.849",
       note="the pattern LP bound of the epochs family"),
    _R("caprara2001", "A. Caprara, P. Toth", "Lower bounds and algorithms for the 2-dimensional vector packing problem",
       "Discrete Applied Mathematics 111(3):231-262", 2001, doi="10.1016/S0166-218X(00)00267-5",
       note="the pattern (set-covering) model of vector bin packing: the epochs column generation"),
    _R("brandao2016", "F. Brandao, J. P. Pedroso",
       "Bin packing and related problems: General arc-flow formulation with graph compression",
       "Computers & Operations Research 69:56-67", 2016, doi="10.1016/j.cor.2015.11.009",
       note="VPSolver; the exact models of vector bin packing compared there"),
    _R("wentges1997", "P. Wentges", "Weighted Dantzig-Wolfe decomposition for linear mixed-integer programming",
       "International Transactions in Operational Research 4(2):151-162", 1997,
       doi="10.1111/j.1475-3995.1997.tb00070.x", note="dual smoothing of the epochs column generation"),
    _R("benamor2006", "H. Ben Amor, J. Desrosiers, J. M. Valerio de Carvalho",
       "Dual-optimal inequalities for stabilized column generation", "Operations Research 54(3):454-463", 2006,
       doi="10.1287/opre.1060.0278", note="the dominance inequalities of the epochs column generation"),
    _R("farley1990", "A. A. Farley",
       "A note on bounding a class of linear programming problems, including cutting stock problems",
       "Operations Research 38(5):922-923", 1990, doi="10.1287/opre.38.5.922",
       note="the lower bound of the epochs column generation at every exact pricing"),
    _R("feitelson1996", "D. G. Feitelson", "Packing Schemes for Gang Scheduling",
       "Job Scheduling Strategies for Parallel Processing (JSSPP 1996), LNCS 1162, Springer, pp. 89-110", 1996,
       doi="10.1007/BFb0022289", note="the feitelson96 workload model"),
    _R("lublin2003", "U. Lublin, D. G. Feitelson",
       "The Workload on Parallel Supercomputers: Modeling the Characteristics of Rigid Jobs",
       "Journal of Parallel and Distributed Computing 63(11):1105-1122", 2003,
       doi="10.1016/S0743-7315(03)00108-4", note="the lublin03 workload model"),
    _R("jann1997", "J. Jann, P. Pattnaik, H. Franke, F. Wang, J. Skovira, J. Riordan", "Modeling of Workload in MPPs",
       "Job Scheduling Strategies for Parallel Processing (IPPS '97 workshop), LNCS 1291, Springer, pp. 95-116",
       1997, doi="10.1007/3-540-63574-2_18", note="hyper-Erlang distributions fitted by three moments"),
    _R("chu1998", "P. C. Chu, J. E. Beasley", "A Genetic Algorithm for the Multidimensional Knapsack Problem",
       "Journal of Heuristics 4(1):63-86", 1998, doi="10.1023/A:1009642405419",
       note="the random MKP generator and the mknapcb best known values"),
    _R("shaw1998", "P. Shaw", "Using Constraint Programming and Local Search Methods to Solve Vehicle Routing "
       "Problems", "Principles and Practice of Constraint Programming (CP 1998), LNCS 1520, Springer, pp. 417-431",
       1998, doi="10.1007/3-540-49481-2_30", note="large-neighbourhood search: the mapping LNS (beyond the seeds)"),
    _R("beasley1990", "J. E. Beasley", "OR-Library: Distributing Test Problems by Electronic Mail",
       "Journal of the Operational Research Society 41(11):1069-1072", 1990, doi="10.1057/jors.1990.166",
       note="mknap1, mknapcb, assign data files"),
    _R("eilon1987", "S. Eilon", "Application of the Knapsack Model for Budgeting",
       "Omega 15(6):489-494", 1987, doi="10.1016/0305-0483(87)90050-2",
       note="the surrogate weights of the greedy MKP: capannini2007 credits 'the solution proposed by "
            "Eilon' and cites Martello and Toth 1990 for it ([14]); this paper is the project's own pointer "
            "to Eilon's work"),
    _R("hopcroft1973", "J. E. Hopcroft, R. M. Karp", "An n^5/2 Algorithm for Maximum Matchings in Bipartite Graphs",
       "SIAM Journal on Computing 2(4):225-231", 1973, doi="10.1137/0202019"),
    _R("kuhn1955", "H. W. Kuhn", "The Hungarian Method for the Assignment Problem",
       "Naval Research Logistics Quarterly 2(1-2):83-97", 1955, doi="10.1002/nav.3800020109"),
    _R("ousterhout1982", "J. K. Ousterhout", "Scheduling Techniques for Concurrent Systems",
       "Proceedings of the 3rd International Conference on Distributed Computing Systems, pp. 22-30", 1982,
       note="the gang-scheduling matrix"),
    _R("shmueli2005", "E. Shmueli, D. G. Feitelson",
       "Backfilling with Lookahead to Optimize the Packing of Parallel Jobs",
       "Journal of Parallel and Distributed Computing 65(9):1090-1107", 2005, doi="10.1016/j.jpdc.2005.05.003",
       note="LOS, as vadhiyar-notes presents it"),
    _R("panigrahy2011", "R. Panigrahy, K. Talwar, L. Uyeda, U. Wieder", "Heuristics for Vector Bin Packing",
       "Microsoft Research technical report", 2011, note="the VBP instance classes"),
    _R("mommessin2025", "C. Mommessin, T. Erlebach, N. V. Shakhlevich",
       "Classification and Evaluation of the Algorithms for Vector Bin Packing",
       "Computers & Operations Research", 2025, note="the VBP data set and its summary of known values"),
]}

#: the specification's source papers by their number in ``../shared/seeds``
SEEDS = {"000": "leinberger1999", "001": "rajaei-dadfar", "002": "vadhiyar-notes", "003": "capannini2007",
         "004": "zhang-comparative"}


def cite(key: str) -> str:
    """One entry as text: authors. Title. Venue, year. DOI."""
    try:
        r = REFERENCES[key]
    except KeyError:
        raise KeyError(f"no reference {key!r}; known: {', '.join(REFERENCES)}") from None
    year = f", {r.year}" if r.year else ""
    link = f". https://doi.org/{r.doi}" if r.doi else (f". {r.url}" if r.url else "")
    return f"{r.authors}. {r.title}. {r.venue}{year}{link}."


def markdown() -> str:
    """The bibliography as Markdown (``docs/references.md``)."""
    seeds = set(SEEDS.values())
    lines = ["# References", "",
             "Docstrings cite these works by key in brackets, with a section, equation or figure "
             "(e.g. `[leinberger1999] section 2.2`).  Generated from `epochbench.references`.", "",
             "## The specification's source papers", ""]
    lines += [f"- **[{k}]** {cite(k)}" + (f"  \n  *Used for:* {REFERENCES[k].note}" if REFERENCES[k].note else "")
              for k in SEEDS.values()]
    lines += ["", "## Other works cited", ""]
    lines += [f"- **[{k}]** {cite(k)}" + (f"  \n  *Used for:* {r.note}" if r.note else "")
              for k, r in REFERENCES.items() if k not in seeds]
    return "\n".join(lines) + "\n"
