// Runs the exported @k of tests/lit/reliability/Inputs/for-step.pto (scf.for %lb to %ub step %st,
// the trip count stored to o[0]) on the host with the declarations-only header: argv gives lb,
// ub and st. A loop that would run with a step that is not positive must stop the kernel (the
// trap word, docs/abi.md) instead of looping forever or wrapping.
#include EXPORTED_FILE

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  int64_t o[1] = {0};
  k(o, std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]));
  std::printf("trips: %lld\n", static_cast<long long>(o[0]));
}
