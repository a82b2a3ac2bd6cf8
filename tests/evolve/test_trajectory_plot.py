"""trajectory.png: the legend never hides data.  The old legend sat at ``lower right``,
inside the axes, where the newest candidates of a run are drawn.  The figure is drawn with
the Agg canvas and the window extents compared: the legend's box must not intersect the
axes' data area, and must lie inside the figure (not cut off)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from asmevo.evolve.report import trajectory_figure  # noqa: E402


def _rows(n, last_speedups):
    """``n`` candidates over K0 = 1000 cycles; the last ones land at the given speed-ups
    (bottom right and top right of the plot: where a legend inside the axes would go)."""
    rows = []
    for i in range(n):
        sp = 1.0 + 0.002 * (i % 7)
        rows.append({"step": i, "hash": f"{i:064x}", "cycles": 1000 / sp, "accepted": i % 3 == 0})
    for j, sp in enumerate(last_speedups):
        rows.append({"step": n + j, "hash": f"f{j:063x}", "cycles": 1000 / sp if sp else None,
                     "accepted": bool(sp) and j % 2 == 0})
    return rows


@pytest.mark.parametrize("measured", [False, True])
@pytest.mark.parametrize("tail", [[0.9, 0.95, None, 1.3], [1.5, 1.49, 0.8, None, 0.7]])
def test_legend_outside_the_data_area(measured, tail):
    fig = trajectory_figure(_rows(40, tail), 1000.0, "vadd_f32",
                            {"name": "asmevo-cu", "version": "1"}, measured)
    try:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        r = canvas.get_renderer()
        ax = fig.axes[0]
        leg = ax.get_legend()
        assert leg is not None and leg.get_visible()
        lb, ab = leg.get_window_extent(r), ax.get_window_extent(r)
        assert not lb.overlaps(ab), (lb, ab)
        fb = fig.bbox
        assert fb.x0 <= lb.x0 and lb.x1 <= fb.x1 and fb.y0 <= lb.y0 and lb.y1 <= fb.y1, (lb, fb)
        # every point is drawn inside the axes (none pushed out by the legend)
        for coll in ax.collections:
            for x, y in coll.get_offsets():
                px, py = ax.transData.transform((x, y))
                assert ab.x0 - 1 <= px <= ab.x1 + 1 and ab.y0 - 1 <= py <= ab.y1 + 1
        labels = [t.get_text() for t in leg.get_texts()]
        assert labels == ["running best", "accepted", "rejected: slower",
                          "rejected by the verifier"]
        assert ax.get_ylabel().startswith("measured" if measured else "estimated")
    finally:
        plt.close(fig)
