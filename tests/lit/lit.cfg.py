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
else:
    config.substitutions.append(("%cxx-syntax", cxx + " -fsyntax-only"))
config.substitutions.append(("%cxx", cxx))
if os.path.isdir(config.pto_shared_dir):
    config.available_features.add("shared")
elif os.environ.get("CI"):
    # Under CI the tests that need ../shared must run, never pass by being skipped.
    lit_config.fatal("../shared is required under CI but missing: " + config.pto_shared_dir)
