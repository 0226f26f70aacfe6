# lit configuration for the tool-level tests: each .pto file carries RUN lines checked with FileCheck.
import os
import lit.formats

config.name = "pto-toolchain"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".pto", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.pto_tools_dir), "tests", "lit-out")

config.environment["PATH"] = os.pathsep.join(
    [config.pto_tools_dir, config.filecheck_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("FileCheck", os.path.basename(config.filecheck)))
config.substitutions.append(("%shared", config.pto_shared_dir))
config.substitutions.append(("%src", config.pto_source_dir))
# The host C++ compiler, for syntax checks of exported C++ (tests/lit/export) and for the few
# tests that build and run a generated program. `%cxx-syntax` is the syntax-only check; the
# sanitizer tree (scripts/sanitize-test.sh sets PTO_LIT_SKIP_CXX_SYNTAX=1) makes it a no-op: the
# compiler run there exercises no sanitized code of ours, the normal tree runs every check, and
# the minutes saved keep CI inside its time. Listed before %cxx, which it begins with.
cxx = getattr(config, "cxx", "c++")
if os.environ.get("PTO_LIT_SKIP_CXX_SYNTAX") == "1":
    config.substitutions.append(("%cxx-syntax", ":"))
    # A test that expects the compiler to refuse code (`not %cxx-syntax`) cannot run there.
    config.available_features.add("no-cxx-syntax")
else:
    config.substitutions.append(("%cxx-syntax", cxx + " -fsyntax-only"))
config.substitutions.append(("%cxx", cxx))
if os.path.isdir(config.pto_shared_dir):
    config.available_features.add("shared")
elif os.environ.get("CI"):
    # Under CI the tests that need ../shared must run, never pass by being skipped.
    lit_config.fatal("../shared is required under CI but missing: " + config.pto_shared_dir)

# MPI (docs/multi-device.md, "Under mpirun"): feature "mpi" when the build found MPI (pto-run
# has its mpirun mode), "mpirun" when Open MPI's mpirun is on PATH. The tests under mpirun need
# both and skip without them, except under CI, where they must run. %mpirun starts the ranks on
# this host, as root in a container too: no ssh, more ranks than cores, no single-copy transfers
# (they need ptrace rights containers lack); `timeout` turns a hang into a failure.
import shutil
if getattr(config, "pto_have_mpi", "OFF").upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("mpi")
if shutil.which("mpirun", path=config.environment["PATH"]):
    config.available_features.add("mpirun")
if os.environ.get("CI") and not {"mpi", "mpirun"} <= config.available_features:
    lit_config.fatal("MPI is required under CI: this build did not find it or mpirun is missing "
                     "(Debian: libopenmpi-dev openmpi-bin, scripts/setup-deps.sh)")
mpirun = ("timeout 120 mpirun --allow-run-as-root --oversubscribe --mca plm_rsh_agent false"
          " --mca btl_vader_single_copy_mechanism none")
if getattr(config, "pto_sanitize", ""):
    # The tools are short-lived processes: LeakSanitizer's scan at each exit, over some 6,000 runs,
    # made the sanitized lit tests about 11% slower (errors/ and forms/: 70.2 s against 62.8 s),
    # for leaks the process's end frees anyway. The unit tests and the fuzz targets keep leak
    # checking for the libraries' code, which the tools are thin mains over.
    # PTO_LIT_LEAK_CHECK=1 turns it back on.
    if os.environ.get("PTO_LIT_LEAK_CHECK") != "1":
        asan = config.environment.get("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", ""))
        config.environment["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "detect_leaks=0"
    # Open MPI's own allocations are not freed at exit: LeakSanitizer would report them.
    mpirun += " -x ASAN_OPTIONS=detect_leaks=0"
config.substitutions.append(("%mpirun", mpirun))
