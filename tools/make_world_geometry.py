#!/usr/bin/python3
"""Writes data/world/countries.csv, the world map of the report's choropleths.

Input: countries-110m.json of the npm package world-atlas 2.0.2 (Natural Earth 1:110m
Admin 0 countries, public domain, as TopoJSON), e.g.
    cd /tmp && npm pack world-atlas@2.0.2 && tar xzf world-atlas-2.0.2.tgz
    /usr/bin/python3 tools/make_world_geometry.py /tmp/package/countries-110m.json
Country codes: ISO 3166-1 numeric -> alpha-3 from Debian's iso-codes
(/usr/share/iso-codes/json/iso_3166-1.json); the three features without a code (N. Cyprus,
Somaliland, Kosovo) get the codes named below.

The TopoJSON arcs are decoded here (quantized: each arc's first point is absolute, the others
are deltas, all scaled by `transform`), each ring is the concatenation of its arcs (a negative
index ~i is arc i reversed; consecutive arcs share their end point), projected
equirectangular at SCALE pixels per degree with latitude cut to [LAT_MIN, LAT_MAX]
(Antarctica dropped; a ring crossing the antimeridian is unwrapped and written twice, 360
degrees apart, for the report to clip to the canvas), rounded to whole pixels and thinned (a point within THIN pixels of the
last kept one is dropped; rings left with fewer than 3 points are dropped).

Output: CSV `iso3,name,subregion,path`, one row per country sorted by iso3; `subregion` is the
UN M49 sub-region (the table below, https://unstats.un.org/unsd/methodology/m49/);
`path` is SVG path data in whole pixels of a WIDTH x HEIGHT canvas with relative moves.
"""
import csv
import json
import sys
from pathlib import Path

SCALE = 4.0  # pixels per degree
LAT_MAX, LAT_MIN = 84.0, -58.0
WIDTH, HEIGHT = int(360 * SCALE), int((LAT_MAX - LAT_MIN) * SCALE)
THIN = 1.0
CODELESS = {"N. Cyprus": "CYN", "Somaliland": "SOL", "Kosovo": "XKX"}

# UN M49 sub-regions (the intermediate regions of sub-Saharan Africa and Latin America merged).
M49 = {
    "Northern Africa": "DZA EGY LBY MAR SDN TUN ESH",
    "Sub-Saharan Africa": "AGO BDI BEN BFA BWA CAF CIV CMR COD COG COM CPV DJI ERI ETH GAB GHA "
    "GIN GMB GNB GNQ KEN LBR LSO MDG MLI MOZ MRT MUS MWI NAM NER NGA RWA SEN SLE SOM SSD STP "
    "SWZ SYC TCD TGO TZA UGA ZAF ZMB ZWE SOL",
    "Northern America": "USA CAN BMU GRL SPM",
    "Latin America and the Caribbean": "ARG BOL BRA CHL COL ECU GUY PRY PER SUR URY VEN FLK "
    "MEX GTM BLZ SLV HND NIC CRI PAN CUB HTI DOM JAM TTO BHS PRI",
    "Central Asia": "KAZ KGZ TJK TKM UZB",
    "Eastern Asia": "CHN JPN KOR PRK MNG TWN HKG MAC",
    "South-eastern Asia": "BRN KHM IDN LAO MYS MMR PHL SGP THA TLS VNM",
    "Southern Asia": "AFG BGD BTN IND IRN LKA MDV NPL PAK",
    "Western Asia": "ARM AZE BHR CYP CYN GEO IRQ ISR JOR KWT LBN OMN QAT SAU PSE SYR TUR ARE YEM",
    "Europe": "ALB AND AUT BLR BEL BIH BGR HRV CZE DNK EST FIN FRA DEU GRC HUN ISL IRL ITA LVA "
    "LIE LTU LUX MLT MDA MCO MNE NLD MKD NOR POL PRT ROU RUS SMR SRB SVK SVN ESP SWE CHE UKR "
    "GBR VAT XKX",
    "Oceania": "AUS NZL PNG FJI SLB VUT NCL",
}
SUBREGION = {code: name for name, codes in M49.items() for code in codes.split()}


def decode_arcs(topo):
    (sx, sy), (tx, ty) = topo["transform"]["scale"], topo["transform"]["translate"]
    arcs = []
    for arc in topo["arcs"]:
        x = y = 0
        points = []
        for dx, dy in arc:
            x += dx
            y += dy
            points.append((x * sx + tx, y * sy + ty))
        arcs.append(points)
    return arcs


def ring_points(ring, arcs):
    points = []
    for index in ring:
        arc = arcs[index] if index >= 0 else arcs[~index][::-1]
        points.extend(arc if not points else arc[1:])
    return points


def project(lon, lat):
    lat = min(LAT_MAX, max(LAT_MIN, lat))
    return round((lon + 180.0) * SCALE), round((LAT_MAX - lat) * SCALE)


def unwrap(points):
    """Longitudes made continuous along the ring (a step of more than 180 degrees crosses the
    antimeridian: Russia, Fiji), so a ring may reach past +-180."""
    out = []
    for lon, lat in points:
        if out:
            while lon - out[-1][0] > 180:
                lon -= 360
            while lon - out[-1][0] < -180:
                lon += 360
        out.append((lon, lat))
    return out


def split_rings(points):
    """The ring, and its copy shifted by 360 degrees when it crosses the antimeridian (the
    report's map clips to the canvas, so each copy shows its side)."""
    points = unwrap(points)
    lons = [p[0] for p in points]
    if max(lons) > 180:
        return [points, [(lon - 360, lat) for lon, lat in points]]
    if min(lons) < -180:
        return [points, [(lon + 360, lat) for lon, lat in points]]
    return [points]


def ring_path(points):
    kept = []
    for lon, lat in points:
        p = project(lon, lat)
        if kept and abs(p[0] - kept[-1][0]) < THIN and abs(p[1] - kept[-1][1]) < THIN:
            continue
        kept.append(p)
    if len(kept) > 1 and kept[-1] == kept[0]:
        kept.pop()
    if len(kept) < 3:
        return None
    return kept


def geometry_path(geometry, arcs):
    polygons = geometry["arcs"] if geometry["type"] == "MultiPolygon" else [geometry["arcs"]]
    out = []
    last = (0, 0)
    for polygon in polygons:
        for ring in [r for ring in polygon for r in split_rings(ring_points(ring, arcs))]:
            kept = ring_path(ring)
            if kept is None:
                continue
            # The first move is absolute in the path; later moves are relative to the last
            # ring's start (SVG's rule for "m" after "z").
            x0, y0 = kept[0]
            out.append(f"{'M' if not out else 'm'}{x0 - last[0]} {y0 - last[1]}")
            steps = [f"{b[0] - a[0]} {b[1] - a[1]}" for a, b in zip(kept, kept[1:])]
            out.append("l" + " ".join(steps).replace(" -", "-") + "z")
            last = (x0, y0)
    return "".join(out).replace(" -", "-")


def main():
    source = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/package/countries-110m.json")
    topo = json.loads(source.read_text())
    iso = json.loads(Path("/usr/share/iso-codes/json/iso_3166-1.json").read_text())
    alpha3 = {c["numeric"]: c["alpha_3"] for c in iso["3166-1"]}
    arcs = decode_arcs(topo)
    rows = []
    for g in topo["objects"]["countries"]["geometries"]:
        name = g["properties"]["name"]
        code = alpha3[g["id"]] if g.get("id") else CODELESS[name]
        if code == "ATA":
            continue
        path = geometry_path(g, arcs)
        if path:
            rows.append((code, name, SUBREGION.get(code, ""), path))
    rows.sort()
    out = Path(__file__).resolve().parent.parent / "data" / "world" / "countries.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["iso3", "name", "subregion", "path"])
        w.writerows(rows)
    missing = [r[0] for r in rows if not r[2]]
    print(f"{out}: {len(rows)} countries, {WIDTH}x{HEIGHT}, {out.stat().st_size} bytes; "
          f"no M49 sub-region: {missing}")


if __name__ == "__main__":
    main()
