"""Command-line options of the test suite."""


def pytest_addoption(parser):
    parser.addoption("--fuzz-cases", type=int, default=0, help="cases in test_fuzz_default (default: 300)")
    parser.addoption("--fuzz-seed", type=int, default=0, help="seed of the fuzzing tests' mutations")
