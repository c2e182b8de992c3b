#!/usr/bin/env python3
"""Writes synA.json and synB.json: strip-packing jobs of interlocking parts (L, T, U, cross,
S/Z and star outlines, ten kinds of three to six copies each, strip height 150), in jagua-rs
JSON. They fill 0.75 and 0.72 of their convex hulls, about as little as swim's parts (0.76),
and were made to test whether what helps swim helps parts of that kind in general
(benches/history/strip.md, thirty-third session). Deterministic; writes beside itself."""
import json
import math
import pathlib
import random


def signed_area(p):
    return sum(p[i][0] * p[(i + 1) % len(p)][1] - p[(i + 1) % len(p)][0] * p[i][1]
               for i in range(len(p))) / 2


def ell(w, h, t):
    return [[0, 0], [w, 0], [w, t], [t, t], [t, h], [0, h]]


def tee(w, h, t):
    c = (w - t) / 2
    return [[0, h - t], [0, h], [w, h], [w, h - t], [c + t, h - t], [c + t, 0], [c, 0], [c, h - t]]


def you(w, h, t):
    return [[0, 0], [w, 0], [w, h], [w - t, h], [w - t, t], [t, t], [t, h], [0, h]]


def cross(w, t):
    a = (w - t) / 2
    b = a + t
    return [[a, 0], [b, 0], [b, a], [w, a], [w, b], [b, b], [b, w], [a, w], [a, b], [0, b],
            [0, a], [a, a]]


def star(r, k, inner):
    return [[(r if i % 2 == 0 else inner) * math.cos(math.pi * i / k) + r,
             (r if i % 2 == 0 else inner) * math.sin(math.pi * i / k) + r] for i in range(2 * k)]


def zed(w, h, t):
    return [[0, 0], [w - t, 0], [w - t, h - t], [w, h - t], [w, h], [t, h], [t, t], [0, t]]


def job(seed, name):
    rnd = random.Random(seed)
    kinds = ["L", "T", "U", "X", "S", "Z"] if name == "synA" else ["L", "T", "U", "X", "star", "Z"]
    items = []
    for k in range(10):
        kind = rnd.choice(kinds)
        w, h = rnd.uniform(20, 60), rnd.uniform(20, 60)
        t = rnd.uniform(0.25, 0.45) * min(w, h)
        if kind == "L":
            p = ell(w, h, t)
        elif kind == "T":
            p = tee(w, h, t)
        elif kind == "U":
            p = you(w, h, t)
        elif kind == "X":
            p = cross(w, t)
        elif kind == "star":
            p = star(w / 2, rnd.choice([4, 5, 6]), w / 2 * rnd.uniform(0.45, 0.6))
        else:
            p = zed(w, h, t)
        p = [[round(x, 3), round(y, 3)] for x, y in p]
        if signed_area(p) < 0:
            p = p[::-1]
        turns = [0.0, 90.0, 180.0, 270.0] if name == "synA" else [0.0, 180.0]
        items.append({"id": k, "demand": rnd.choice([3, 4, 5, 6]), "allowed_orientations": turns,
                      "shape": {"type": "simple_polygon", "data": p}})
    return {"name": name, "strip_height": 150.0, "items": items}


for seed, name in [(11, "synA"), (12, "synB")]:
    with open(pathlib.Path(__file__).parent / f"{name}.json", "w") as f:
        json.dump(job(seed, name), f)
