#!/usr/bin/python3
"""Golden NMI / ARI values from scikit-learn for metrics' Go tests.

Run from the repository root with Debian's python3-sklearn:
    /usr/bin/python3 metrics/testdata/golden.py > metrics/testdata/golden.json
The Go tests compare against the committed JSON, so CI needs no Python.
"""
import json
import random
import sys

import sklearn
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score


def case(name, a, b):
    return {
        "name": name,
        "a": a,
        "b": b,
        "nmi": float(normalized_mutual_info_score(a, b)),  # arithmetic mean
        "ari": float(adjusted_rand_score(a, b)),
    }


def main():
    rng = random.Random(20261121)
    cases = []
    # Edge cases.
    cases.append(case("identical", [0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 2, 2]))
    cases.append(case("identical-relabelled", [0, 0, 1, 1, 2, 2], [5, 5, 3, 3, 9, 9]))
    cases.append(case("single-cluster-both", [0] * 7, [3] * 7))
    cases.append(case("single-vs-split", [0] * 6, [0, 0, 0, 1, 1, 1]))
    cases.append(case("singletons-both", list(range(8)), list(range(8))))
    cases.append(case("singletons-vs-single", list(range(8)), [0] * 8))
    cases.append(case("singletons-vs-pairs", list(range(8)), [0, 0, 1, 1, 2, 2, 3, 3]))
    cases.append(case("two-elements-apart", [0, 1], [0, 0]))
    cases.append(case("one-element", [4], [7]))
    cases.append(case("nested", [0, 0, 1, 1, 2, 2, 3, 3], [0, 0, 0, 0, 1, 1, 1, 1]))
    cases.append(case("crossing", [0, 0, 1, 1], [0, 1, 0, 1]))
    # Seeded random label pairs of several shapes.
    for i in range(40):
        n = rng.choice([5, 10, 17, 50, 128, 300])
        ka = rng.randint(1, max(1, n // 2))
        kb = rng.randint(1, max(1, n // 2))
        a = [rng.randrange(ka) for _ in range(n)]
        if i % 3 == 0:
            # Perturbed copy: close to a, as a near-correct clustering is.
            b = [x if rng.random() < 0.8 else rng.randrange(kb) for x in a]
        else:
            b = [rng.randrange(kb) for _ in range(n)]
        cases.append(case("random-%d" % i, a, b))
    # One case per line keeps the fixture reviewable.
    out = sys.stdout
    out.write('{"sklearn_version": %s,\n "cases": [\n' % json.dumps(sklearn.__version__))
    out.write(",\n".join("  " + json.dumps(c) for c in cases))
    out.write("\n ]}\n")


if __name__ == "__main__":
    main()
