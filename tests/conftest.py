"""Shared pytest configuration."""


def pytest_addoption(parser):
    # Differential fuzzer of the translator (tests/test_fuzz_translator.py).
    parser.addoption("--fuzz-count", type=int, default=2000,
                     help="number of random functions the translator fuzzer runs")
    parser.addoption("--fuzz-seed", type=int, default=20240601,
                     help="seed of the translator fuzzer")
