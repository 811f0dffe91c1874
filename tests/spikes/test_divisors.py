"""``harness.spikes.divisors``: a divisor is an input of torch.compile's graph, not a
constant Inductor could turn into a reciprocal multiply."""

from __future__ import annotations

from typing import Any

import pytest

from harness.spikes import divisors

torch = pytest.importorskip("torch")


def test_a_divisor_is_an_input_of_the_compiled_graph_not_a_constant() -> None:
    """The trace sees the divisor as a graph input (Inductor can only turn a constant's
    division into a reciprocal multiply), in one graph with the ops after it, before and
    after the cache holds it, and the graph divides by it. (Whether Inductor's GPU code then
    divides as IEEE does is the GPU's to show: the torch_compile rows pass or fail.)"""
    graphs: list[Any] = []

    def backend(gm: Any, example: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    def scales(w: Any) -> Any:
        d = divisors.divisor(torch, 127.0, w.device)
        return w.abs().amax(dim=1) / d

    divisors._DIVISORS.clear()
    for shape in ((4, 8), (6, 8)):  # the first trace makes the divisor, the second reads it
        torch._dynamo.reset()
        graphs.clear()
        w = torch.randn(*shape, generator=torch.Generator().manual_seed(shape[0]))
        got = torch.compile(scales, backend=backend, dynamic=False)(w)
        assert torch.equal(got, w.abs().amax(dim=1) / torch.tensor(127.0))  # the same math
        ops = [n for g in graphs for n in g.graph.nodes if n.op == "call_function"
               or n.op == "call_method"]
        assert len(graphs) == 1, [str(g.graph) for g in graphs]
        assert sum(n.op == "placeholder" for n in graphs[0].graph.nodes) == 2
        assert any("div" in str(n.target) for n in ops)
    assert list(divisors._DIVISORS) == [(127.0, "cpu")]
