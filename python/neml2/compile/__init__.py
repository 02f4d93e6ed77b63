"""neml2-compile: export a model's graphs with torch.export and compile each with AOTInductor.

Writes ``<out>/<model>_aoti.i`` and ``<out>/<model>/<device>/`` (model_meta.json and one
``.pt2`` per graph) as doc/artifacts.md specifies, plus ``.neml2-fingerprint`` in each
device folder: what the folder was compiled from, so that an unchanged folder is skipped.
With ``-j N`` the graphs compile in N spawned processes, each rebuilding the model from
the input file.

The modules, in the order they build on each other:

- :mod:`.selection`: the pairs, parameters, graphs and devices to compile;
- :mod:`.export`: the graph modules, their export and compile, and model_meta.json;
- :mod:`.request`: the command line's request and the model built from it, in its dtype;
- :mod:`.output`: output paths, checked first and written atomically;
- :mod:`.fingerprints`: what a device folder was compiled from, to skip unchanged ones;
- :mod:`.workers`: the compile jobs, serially or in worker processes;
- :mod:`.driver`: :func:`compile_model`, every stale device folder and the stub;
- :mod:`.cli`: the command line and :func:`main`.

Every name of these modules is also importable from ``neml2.compile`` itself. A name
replaced at run time (a test's monkeypatch) must be replaced in the module that looks it
up: ``compile_graph``, for instance, in :mod:`.workers`.
"""

from .cli import (
    DESCRIPTION,
    EPILOG,
    RUNS,
    Values,
    looks_like_file,
    main,
    make_parser,
    parse_args,
    positive_int,
)
from .driver import compile_model
from .export import (
    BATCHED_ROLES,
    EXAMPLE_BATCH,
    STATUS_RETURNS,
    Graph,
    Spec,
    batched_arg,
    buffer_reuse_fault,
    build_meta,
    compile_graph,
    dtype_text,
    graph_args,
    graph_meta,
    graph_returns,
    inductor_configs,
    per_point,
    regular_returns,
    settings_meta,
    variables_meta,
)
from .fingerprints import (
    FINGERPRINT_FILE,
    FINGERPRINT_FORMAT,
    FINGERPRINT_LABELS,
    canonical_blocks,
    dependency_sections,
    file_digest,
    fingerprint,
    fingerprint_inputs,
    graph_files,
    only_names_changed,
    package_digest,
    rewrite_names,
    stale_reason,
    write_fingerprint,
    written_meta,
)
from .output import (
    build_folder,
    check_model_name,
    check_targets,
    install_folder,
    interrupts_blocked,
    interrupts_deferred,
    missing_folders,
    write_stub,
)
from .request import (
    FLOAT32_MIN_REL_TOL,
    Prepared,
    Request,
    check_dtype,
    implicit_leaves,
    prepare,
    select_renames,
)
from .selection import (
    GRAPH_NEEDS,
    INTO_SUFFIX,
    PER_POINT_SUFFIX,
    Selection,
    allowed_graphs,
    parse_devices,
    select_graphs,
    select_into,
    select_pairs,
    select_params,
    select_per_point,
)
from .workers import (
    Compiler,
    DeviceWork,
    Job,
    compile_in_worker,
    compile_one,
    failure_message,
    init_worker,
    stop_workers,
)

__all__ = [
    "BATCHED_ROLES",
    "DESCRIPTION",
    "EPILOG",
    "EXAMPLE_BATCH",
    "FINGERPRINT_FILE",
    "FINGERPRINT_FORMAT",
    "FINGERPRINT_LABELS",
    "FLOAT32_MIN_REL_TOL",
    "GRAPH_NEEDS",
    "INTO_SUFFIX",
    "PER_POINT_SUFFIX",
    "RUNS",
    "STATUS_RETURNS",
    "Compiler",
    "DeviceWork",
    "Graph",
    "Job",
    "Prepared",
    "Request",
    "Selection",
    "Spec",
    "Values",
    "allowed_graphs",
    "batched_arg",
    "buffer_reuse_fault",
    "build_folder",
    "build_meta",
    "canonical_blocks",
    "check_dtype",
    "check_model_name",
    "check_targets",
    "compile_graph",
    "compile_in_worker",
    "compile_model",
    "compile_one",
    "dependency_sections",
    "dtype_text",
    "failure_message",
    "file_digest",
    "fingerprint",
    "fingerprint_inputs",
    "graph_args",
    "graph_files",
    "graph_meta",
    "graph_returns",
    "implicit_leaves",
    "inductor_configs",
    "init_worker",
    "install_folder",
    "interrupts_blocked",
    "interrupts_deferred",
    "looks_like_file",
    "main",
    "make_parser",
    "missing_folders",
    "only_names_changed",
    "package_digest",
    "parse_args",
    "parse_devices",
    "per_point",
    "positive_int",
    "prepare",
    "regular_returns",
    "rewrite_names",
    "select_graphs",
    "select_into",
    "select_pairs",
    "select_params",
    "select_per_point",
    "select_renames",
    "settings_meta",
    "stale_reason",
    "stop_workers",
    "variables_meta",
    "write_fingerprint",
    "write_stub",
    "written_meta",
]
