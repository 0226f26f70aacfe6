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
# The host C++ compiler, for syntax checks of exported C++ (tests/lit/export).
config.substitutions.append(("%cxx", getattr(config, "cxx", "c++")))
if os.path.isdir(config.pto_shared_dir):
    config.available_features.add("shared")
elif os.environ.get("CI"):
    # Under CI the tests that need ../shared must run, never pass by being skipped.
    lit_config.fatal("../shared is required under CI but missing: " + config.pto_shared_dir)
