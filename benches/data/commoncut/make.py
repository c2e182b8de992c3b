#!/usr/bin/env python3
"""Builds the instances of `kerf bench commoncut` (jagua-rs JSON with a `sheets` list, as
`kerf bench sheets` reads), in millimetres on 3000 x 1500 sheets. Run from this directory; it
rewrites the JSON files.

- rectangles_200: ten rectangle sizes a sheet-metal shop might cut, 20 of each.
- polygons_200: straight-edged ESICUP parts (fu: convex polygons; jakobs1: rectangles, Ls, Ts
  and crosses), scaled to a few hundred millimetres: 10 of each fu part, 3 of each jakobs1 part
  (4 of the first five), 200 in all."""
import json

SHEETS = [{"id": "S3000x1500", "width": 3000.0, "height": 1500.0, "quantity": 0}]
ROT = [0.0, 90.0, 180.0, 270.0]


def rectangle(i, w, h, demand):
    return {
        "id": i,
        "demand": demand,
        "allowed_orientations": ROT,
        "shape": {"type": "simple_polygon", "data": [[0, 0], [w, 0], [w, h], [0, h]]},
    }


SIZES = [(400, 300), (600, 250), (350, 350), (500, 200), (300, 150),
         (450, 320), (250, 180), (700, 400), (200, 120), (380, 260)]
rects = {
    "name": "rectangles_200",
    "items": [rectangle(i, w, h, 20) for i, (w, h) in enumerate(SIZES)],
    "sheets": SHEETS,
}

items = []
for source, scale, demand in [("fu", 30.0, lambda k: 10), ("jakobs1", 50.0, lambda k: 4 if k < 5 else 3)]:
    with open(f"../nest2d/{source}.json") as f:
        inst = json.load(f)
    for k, it in enumerate(inst["items"]):
        items.append({
            "id": len(items),
            "demand": demand(k),
            "allowed_orientations": ROT,
            "shape": {
                "type": "simple_polygon",
                "data": [[x * scale, y * scale] for x, y in it["shape"]["data"]],
            },
        })
polys = {"name": "polygons_200", "items": items, "sheets": SHEETS}
assert sum(i["demand"] for i in items) == 200

for inst in (rects, polys):
    with open(f"{inst['name']}.json", "w") as f:
        json.dump(inst, f)
    print(inst["name"], sum(i["demand"] for i in inst["items"]))
