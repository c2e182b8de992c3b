#!/usr/bin/env python3
"""Builds the multi-sheet instances of `kerf bench sheets` from the ESICUP strip instances in
../nest2d: each item's demand multiplied, the strip replaced by a list of sheets of the strip's
height (quantity 0: as many as needed). Run from this directory; it rewrites the JSON files here
and in ../sheets-large and ../sheets-other."""
import json

# name, source, demand factor, sheets [(id, width, quantity)] (height: the strip's)
INSTANCES = [
    ("shirts_x2", "shirts", 2, [("S20", 20.0, 0)]),
    ("trousers_x2", "trousers", 2, [("S88", 88.5, 0)]),
    ("albano_x3", "albano", 3, [("S6000", 6000.0, 0)]),
    ("swim_x3", "swim", 3, [("S3000", 3000.0, 0)]),
    ("dagli_x4", "dagli", 4, [("S40", 40.0, 0)]),
    ("jakobs1_x6", "jakobs1", 6, [("S15", 15.0, 0)]),
    ("shapes1_x3", "shapes1", 3, [("S30", 30.0, 0)]),
    # two sizes: two long sheets in stock, then as many short ones as needed
    ("marques_x4_2sizes", "marques", 4, [("S80", 80.0, 2), ("S60", 60.0, 0)]),
    # added later, measured before any tuning on them: few big parts to a sheet (fu), long
    # parts (mao), and the gardeyn sets: many copies of few kinds (gardeyn0, gardeyn1) and
    # distinct parts (gardeyn2 twice, gardeyn3 once: a sheet's share of a kind rounds up to
    # every copy)
    ("fu_x6", "fu", 6, [("S20", 20.0, 0)]),
    ("mao_x4", "mao", 4, [("S1400", 1400.0, 0)]),
    ("gardeyn0_x2", "gardeyn0", 2, [("S25000", 25000.0, 0)]),
    ("gardeyn1_x3", "gardeyn1", 3, [("S12000", 12000.0, 0)]),
    ("gardeyn2_x2", "gardeyn2", 2, [("S20000", 20000.0, 0)]),
    ("gardeyn3_x1", "gardeyn3", 1, [("S16000", 16000.0, 0)]),
]

# large jobs (`../sheets-large`): many sheets, where each sheet gets well under a second of a
# 60 s limit; measured, not tuned on (benches/history/multi-sheet.md)
LARGE = [
    ("shirts_x10", "shirts", 10, [("S20", 20.0, 0)]),
    ("trousers_x8", "trousers", 8, [("S88", 88.5, 0)]),
    ("swim_x10", "swim", 10, [("S3000", 3000.0, 0)]),
    ("jakobs1_x30", "jakobs1", 30, [("S15", 15.0, 0)]),
]

# other sheet lengths (`../sheets-other`): the same parts at other demands, on sheets shorter or
# longer against the parts than above (dagli on 30 x 60 where dagli_x4 has 40 x 60, fu on
# 15 x 38 where fu_x6 has 20 x 38, albano on 4000 x 4900 where albano_x3 has 6000 x 4900);
# added in the twenty-second session as a check on the general case and measured before
# anything was changed for them (benches/history/multi-sheet.md)
OTHER = [
    ("albano_x5", "albano", 5, [("S4000", 4000.0, 0)]),
    ("dagli_x6", "dagli", 6, [("S30", 30.0, 0)]),
    ("fu_x10", "fu", 10, [("S15", 15.0, 0)]),
    ("gardeyn1_x5", "gardeyn1", 5, [("S8000", 8000.0, 0)]),
    ("jakobs1_x10", "jakobs1", 10, [("S20", 20.0, 0)]),
    ("mao_x6", "mao", 6, [("S1000", 1000.0, 0)]),
    ("marques_x6", "marques", 6, [("S50", 50.0, 0)]),
    ("shapes1_x5", "shapes1", 5, [("S20", 20.0, 0)]),
    ("shirts_x4", "shirts", 4, [("S30", 30.0, 0)]),
    ("swim_x5", "swim", 5, [("S2000", 2000.0, 0)]),
    ("trousers_x4", "trousers", 4, [("S60", 60.0, 0)]),
]

for out_dir, instances in [
    (".", INSTANCES),
    ("../sheets-large", LARGE),
    ("../sheets-other", OTHER),
]:
    for name, source, factor, sheets in instances:
        with open(f"../nest2d/{source}.json") as f:
            inst = json.load(f)
        height = inst.pop("strip_height")
        inst["name"] = name
        for item in inst["items"]:
            item["demand"] *= factor
        inst["sheets"] = [
            {"id": sid, "width": width, "height": height, "quantity": qty}
            for sid, width, qty in sheets
        ]
        with open(f"{out_dir}/{name}.json", "w") as f:
            json.dump(inst, f)
        print(f"{out_dir}/{name}")
