#!/usr/bin/env python3
"""Validate AOE result files (aoe-result(5)) written by aoe-report.

usage: result-schema.py FILE...   exits 0 if every file is valid, else
prints each problem and exits 1.

Field by field, as DESIGN.md and aoe-result(5) give the schema: every
object holds exactly its fields (the documented additions op_names and
tune_failed_subgraphs aside), each of the right type; the summary
invariants hold; every improvement string agrees with its times; the
entry lists agree with the summary counts; an added or updated case is
faster after than before.
"""
import datetime
import json
import re
import sys

SUMMARY = ("repo_add_num", "repo_hit_num", "repo_reserved_num",
           "repo_unsatisfied_num", "repo_update_num", "total_num")
OP_ENTRY = ("op_name", "op_type", "performance_before_tune(us)",
            "performance_after_tune(us)", "performance_improvement")
SG_ENTRY = ("repo_key", "performance_before_tune(ms)",
            "performance_after_tune(ms)", "performance_improvement")
OPAT = ("opat_tune_result", "repo_modified_operators", "repo_summary")
# aoe-opat's whole-model check, when its records have a "model" record.
OPAT_MODEL = ("model_baseline_performance(ms)", "model_result_performance(ms)",
              "model_performance_improvement", "backed_out_operators")
SGAT = ("model_baseline_performance(ms)", "model_result_performance(ms)",
        "model_performance_improvement", "repo_modified_subgraphs",
        "repo_summary")


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def count(x):
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def name(x):
    return isinstance(x, str) and x != ""


def stamp_ok(s):
    """YYYYmmddHHMMSSmmm, a real date and time."""
    try:
        datetime.datetime.strptime(s[:14], "%Y%m%d%H%M%S")
    except ValueError:
        return False
    return len(s) == 17 and s[14:].isdigit()


def fields(obj, need, may, errs, where):
    """obj is an object with every field of need, and others only from may."""
    if not isinstance(obj, dict):
        errs.append("%s: must be an object" % where)
        return False
    for k in need:
        if k not in obj:
            errs.append("%s: no %s" % (where, k))
    for k in obj:
        if k not in need and k not in may:
            errs.append("%s: unknown field %s" % (where, k))
    return all(k in obj for k in need)


def gain_ok(s, b, a, errs, where):
    if not isinstance(s, str) or not re.fullmatch(r"-?\d+\.\d\d%", s):
        errs.append("%s: bad performance_improvement %r" % (where, s))
        return
    if not num(b) or not num(a) or b < 0 or a < 0:
        errs.append("%s: times must be non-negative numbers" % where)
        return
    want = (b - a) / b * 100 if b > 0 else 0.0
    if abs(float(s[:-1]) - want) > 0.006:
        errs.append("%s: improvement %s, times give %.2f%%" % (where, s, want))


def check_summary(s, errs, where):
    where += ": repo_summary"
    if not fields(s, SUMMARY, (), errs, where):
        return None
    if not all(count(s[k]) for k in SUMMARY):
        errs.append(where + ": counts must be non-negative integers")
        return None
    if s["total_num"] != s["repo_add_num"] + s["repo_hit_num"] + s["repo_unsatisfied_num"]:
        errs.append(where + ": total != add + hit + unsatisfied")
    if s["repo_hit_num"] != s["repo_reserved_num"] + s["repo_update_num"]:
        errs.append(where + ": hit != reserved + update")
    return s


def check_entries(mod, arrs, entry, unit, extra, errs, where):
    """The add and update arrays; returns their lengths or None."""
    if not fields(mod, arrs, (), errs, where):
        return None
    lens = []
    for arr in arrs:
        w = "%s: %s" % (where, arr)
        if not isinstance(mod[arr], list):
            errs.append(w + ": must be an array")
            return None
        lens.append(len(mod[arr]))
        for i, e in enumerate(mod[arr]):
            we = "%s[%d]" % (w, i)
            if not fields(e, entry, extra, errs, we):
                continue
            for f in entry[:-3]:
                if not name(e[f]):
                    errs.append("%s: %s must be a non-empty string" % (we, f))
            if unit == "ms" and isinstance(e["repo_key"], str) and \
                    not re.fullmatch(r"\d+", e["repo_key"]):
                errs.append(we + ": repo_key must be a decimal key")
            b = e["performance_before_tune(%s)" % unit]
            a = e["performance_after_tune(%s)" % unit]
            gain_ok(e["performance_improvement"], b, a, errs, we)
            if num(b) and num(a) and not a < b:
                errs.append(we + ": an admitted case must be faster after")
            if "op_names" in e and (not isinstance(e["op_names"], list) or
                                    not all(name(x) for x in e["op_names"]) or
                                    e["op_name"] not in e["op_names"]):
                errs.append(we + ": op_names must list names, op_name among them")
    return lens


def check_failed(o, key, result_failed, s, errs, w):
    failed = o.get(key)
    if failed is not None:
        if not isinstance(failed, list) or not failed or \
                not all(name(x) for x in failed):
            errs.append("%s: %s must be a non-empty array of names" % (w, key))
        elif s and len(failed) > s["repo_unsatisfied_num"]:
            errs.append("%s: more %s than unsatisfied cases" % (w, key))
    if result_failed is not None and result_failed != (failed is not None):
        errs.append(w + ": tune failed iff tune_failed_operators is present")


def check(path):
    errs = []
    m = re.search(r"(^|/)aoe_result_(opat|sgat)_(\d{17})_pid\d+\.json$", path)
    if not m or not stamp_ok(m.group(3)):
        errs.append(path + ": file name does not follow AOE's pattern")
    kind = m.group(2) if m else ("opat" if "opat" in path else "sgat")
    doc = json.load(open(path))
    if not isinstance(doc, dict) or not doc:
        return errs + [path + ": not a non-empty object"]
    for key, task in doc.items():
        w = "%s: %s" % (path, key)
        km = re.fullmatch(r"report_(\d{17})_\d+", key)
        if not km or not stamp_ok(km.group(1)):
            errs.append(w + ": bad report key")
        if not isinstance(task, list) or len(task) != 2:
            errs.append(w + ": must be [basic, OPAT|SGAT]")
            continue
        if fields(task[0], ("basic",), (), errs, w + ": [0]"):
            b = task[0]["basic"]
            if fields(b, ("tuning_name", "tuning_time(s)"), (), errs, w + ": basic"):
                if not name(b["tuning_name"]):
                    errs.append(w + ": basic: tuning_name must be a non-empty string")
                if not num(b["tuning_time(s)"]) or b["tuning_time(s)"] < 0:
                    errs.append(w + ": basic: tuning_time(s) must be a non-negative number")
        job = "OPAT" if kind == "opat" else "SGAT"
        if not fields(task[1], (job,), (), errs, w + ": [1]"):
            continue
        o = task[1][job]
        w += ": " + job
        if kind == "opat":
            if not fields(o, OPAT, ("tune_failed_operators",) + OPAT_MODEL, errs, w):
                continue
            if any(k in o for k in OPAT_MODEL):
                if not all(k in o for k in OPAT_MODEL):
                    errs.append(w + ": the model fields come together")
                    continue
                gain_ok(o["model_performance_improvement"],
                        o["model_baseline_performance(ms)"],
                        o["model_result_performance(ms)"], errs, w + ": model")
                if not isinstance(o["backed_out_operators"], list) or \
                        not all(isinstance(x, str)
                                for x in o["backed_out_operators"]):
                    errs.append(w + ": backed_out_operators must be a list of names")
            r = o["opat_tune_result"]
            if r not in ("tune success", "tune failed"):
                errs.append(w + ": bad opat_tune_result %r" % (r,))
            lens = check_entries(o["repo_modified_operators"],
                                 ("add_repo_operators", "update_repo_operators"),
                                 OP_ENTRY, "us", ("op_names",), errs,
                                 w + ": repo_modified_operators")
            s = check_summary(o["repo_summary"], errs, w)
            check_failed(o, "tune_failed_operators", r == "tune failed", s, errs, w)
        else:
            if not fields(o, SGAT, ("tune_failed_subgraphs",), errs, w):
                continue
            gain_ok(o["model_performance_improvement"],
                    o["model_baseline_performance(ms)"],
                    o["model_result_performance(ms)"], errs, w + ": model")
            lens = check_entries(o["repo_modified_subgraphs"],
                                 ("add_repo_subgraphs", "update_repo_subgraphs"),
                                 SG_ENTRY, "ms", (), errs,
                                 w + ": repo_modified_subgraphs")
            s = check_summary(o["repo_summary"], errs, w)
            check_failed(o, "tune_failed_subgraphs", None, s, errs, w)
        if s and lens and lens != [s["repo_add_num"], s["repo_update_num"]]:
            errs.append(w + ": entry counts differ from repo_summary")
    return errs


def main():
    errs = []
    for p in sys.argv[1:]:
        try:
            errs += check(p)
        except (OSError, ValueError) as e:
            errs.append("%s: %s" % (p, e))
    for e in errs:
        print(e)
    sys.exit(1 if errs or len(sys.argv) < 2 else 0)


if __name__ == "__main__":
    main()
