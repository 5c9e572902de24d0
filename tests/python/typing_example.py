"""A program that uses shapeflow as its users do; `mypy --strict` checks it (test_package.py)."""
import sys
from typing import Dict, List, Optional, Union

import shapeflow


def shapes(path: str) -> Dict[str, Optional[List[Union[int, shapeflow.Dim]]]]:
    model = shapeflow.load(path)
    inference = model.infer(dims={"N": (1, 8)})
    return {name: t.shape for name, t in inference.tensors.items()}


def peak_bytes(path: str) -> Optional[int]:
    plan = shapeflow.load(path).infer(dims={"N": (1, 8), "H": (1, 64), "W": (1, 64)}).plan()
    peak = plan.peak
    return peak.max if isinstance(peak, shapeflow.Expression) else int(peak)


def macs_at(path: str, n: int, h: int, w: int) -> int:
    total = shapeflow.load(path).infer().stats().total.macs
    return total.evaluate(N=n, H=h, W=w) if isinstance(total, shapeflow.Expression) else int(total)


def main() -> int:
    path = sys.argv[1]
    first: Dict[str, Optional[List[Union[int, shapeflow.Dim]]]] = shapes(path)
    check: shapeflow.CheckResult = shapeflow.load(path).check(samples=1)
    print(len(first), peak_bytes(path), macs_at(path, 1, 32, 32), check.passed, shapeflow.__version__)
    return 0 if check.passed else 1


if __name__ == "__main__":
    sys.exit(main())
