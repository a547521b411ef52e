"""MMR: the numba kernel (``domain.scoring.mmr_select``) against the plain numpy reference.

1,500 candidates of 4,096 dimensions (random, L2-normalised float32), top_k 20 (and 10, 50):
median time of each over several interleaved runs (the kernel after a warm-up compile), and
the ratio. Target: the kernel at top_k 20 <= 15 ms. Also checks that both pick the same
indices on random data with distinct scores. Random vectors are nearly orthogonal, which is
the kernel's easy case (its lazy bound stops early), so a clustered set (near-duplicate
candidates around a few topics) is timed too.

    uv run python bench/mmr.py [--quick]

Pure computation: no NoneBot, no folder, no network.
"""

from __future__ import annotations

import time

import numpy as np
from _common import machine_line, median, parse_args, verdict

from amrita_plugin_cognition.domain.scoring import mmr_select, mmr_select_numpy

CANDIDATES = 1500
DIMENSIONS = 4096
LAMBDA = 0.7
TARGET_MS = 15.0


def normalised(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def random_set(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    embeddings = normalised(rng.standard_normal((CANDIDATES, DIMENSIONS), dtype=np.float32))
    scores = rng.permutation(CANDIDATES).astype(np.float64) / CANDIDATES + rng.random(CANDIDATES) * 1e-6
    return embeddings, scores


def clustered_set(rng: np.random.Generator, topics: int = 30) -> tuple[np.ndarray, np.ndarray]:
    centres = rng.standard_normal((topics, DIMENSIONS), dtype=np.float32)
    members = centres[rng.integers(0, topics, CANDIDATES)]
    embeddings = normalised(members + 0.6 * rng.standard_normal((CANDIDATES, DIMENSIONS), dtype=np.float32))
    scores = rng.permutation(CANDIDATES).astype(np.float64) / CANDIDATES + rng.random(CANDIDATES) * 1e-6
    return embeddings, scores


def timed_ms(function, *args) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    function(*args)
    return (time.perf_counter() - started) * 1000.0


def compare(name: str, embeddings: np.ndarray, scores: np.ndarray, top_k: int, runs: int) -> float:
    kernel: list[float] = []
    reference: list[float] = []
    for _ in range(runs):  # interleaved, so both see the same machine noise
        kernel.append(timed_ms(mmr_select, embeddings, scores, top_k, LAMBDA))
        reference.append(timed_ms(mmr_select_numpy, embeddings, scores, top_k, LAMBDA))
    kernel_ms, numpy_ms = median(kernel), median(reference)
    same = mmr_select(embeddings, scores, top_k, LAMBDA) == mmr_select_numpy(embeddings, scores, top_k, LAMBDA)
    print(
        f"{name:<9} top_k={top_k:<3} kernel median {kernel_ms:7.3f} ms  numpy median {numpy_ms:7.3f} ms  "
        f"kernel/numpy {kernel_ms / numpy_ms:.3f} (speed-up x{numpy_ms / kernel_ms:.1f})  same indices: {same}"
    )
    return kernel_ms


def main() -> None:
    args = parse_args("MMR kernel vs numpy reference")
    runs = 5 if args.quick else 31
    seeds = 3 if args.quick else 20
    rng = np.random.default_rng(2026)
    print(f"# bench/mmr.py  {machine_line()}  ({CANDIDATES} x {DIMENSIONS} float32, lambda {LAMBDA}, {runs} runs)")
    embeddings, scores = random_set(rng)
    started = time.perf_counter()
    mmr_select(embeddings, scores, 20, LAMBDA)  # warm-up: compile, or load the cached machine code
    print(f"warm-up (compile or cache load): {(time.perf_counter() - started) * 1000:.0f} ms")
    results = {top_k: compare("random", embeddings, scores, top_k, runs) for top_k in (10, 20, 50)}
    clustered_embeddings, clustered_scores = clustered_set(rng)
    for top_k in (10, 20, 50):
        compare("clustered", clustered_embeddings, clustered_scores, top_k, runs)
    agreements = 0
    for _ in range(seeds):
        trial_embeddings, trial_scores = random_set(rng)
        for top_k in (10, 20, 50):
            agreements += mmr_select(trial_embeddings, trial_scores, top_k, LAMBDA) == mmr_select_numpy(
                trial_embeddings, trial_scores, top_k, LAMBDA
            )
    print(f"same indices on {agreements}/{seeds * 3} random trials (distinct scores, top_k 10/20/50)")
    print(f"mmr_select top_k=20 median {results[20]:.3f} ms: {verdict(results[20], TARGET_MS)}")


if __name__ == "__main__":
    main()
