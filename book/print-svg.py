#!/usr/bin/env python3
"""print-svg.py IN.svg OUT.svg: a copy of a gnuplot figure for weasyprint.

gnuplot draws each point as <use xlink:href="#gpPtN" color="..."/> of a
shape whose fill or stroke is currentColor; weasyprint 57 cannot resolve
currentColor through <use> (it stops with a ValueError). This writes each
such <use> out as a <g> holding a copy of the shape, currentColor replaced
by the point's colour. The site keeps gnuplot's own file."""
import copy
import sys
import xml.etree.ElementTree as ET

SVG, XLINK = "http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG)
ET.register_namespace("xlink", XLINK)
HREF = "{%s}href" % XLINK

tree = ET.parse(sys.argv[1])
root = tree.getroot()
ids = {e.get("id"): e for e in root.iter() if e.get("id")}

def expand(el, color):
    """el, with every <use> replaced by its target and currentColor by color."""
    if el.tag == "{%s}use" % SVG and el.get(HREF, "").startswith("#"):
        target = ids.get(el.get(HREF)[1:])
        if target is not None:
            g = ET.Element("{%s}g" % SVG)
            for k, v in el.attrib.items():
                if k not in (HREF, "id", "x", "y"):
                    g.set(k, v)
            if el.get("x") or el.get("y"):
                t = "translate(%s,%s)" % (el.get("x", "0"), el.get("y", "0"))
                g.set("transform", (g.get("transform", "") + " " + t).strip())
            color = el.get("color", color)
            g.append(expand(target, color))
            el = g
    el = copy.copy(el)
    for k, v in list(el.attrib.items()):
        if v == "currentColor":
            el.set(k, color)
    el[:] = [expand(c, color) for c in list(el)]
    if el.tag != "{%s}g" % SVG or "id" in el.attrib:
        el.attrib.pop("id", None)
    return el

def walk(parent):
    for i, child in enumerate(list(parent)):
        if child.tag == "{%s}defs" % SVG:
            continue
        if child.tag == "{%s}use" % SVG:
            parent[i] = expand(child, child.get("color", "black"))
        else:
            walk(child)

walk(root)
tree.write(sys.argv[2], xml_declaration=True, encoding="utf-8")
