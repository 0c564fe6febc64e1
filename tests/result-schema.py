#!/usr/bin/env python3
"""Validate AOE result files (aoe-result(5)) written by aoe-report.

usage: result-schema.py FILE...   exits 0 if every file is valid, else
prints each problem and exits 1.
"""
import json
import re
import sys

SUMMARY = ("repo_add_num", "repo_hit_num", "repo_reserved_num",
           "repo_unsatisfied_num", "repo_update_num", "total_num")


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def gain_ok(entry, before, after, errs, where):
    s = entry.get("performance_improvement")
    if not isinstance(s, str) or not re.fullmatch(r"-?\d+\.\d\d%", s):
        errs.append("%s: bad performance_improvement %r" % (where, s))
        return
    b, a = entry.get(before), entry.get(after)
    if not num(b) or not num(a):
        errs.append("%s: %s/%s must be numbers" % (where, before, after))
        return
    want = (b - a) / b * 100 if b > 0 else 0.0
    if abs(float(s[:-1]) - want) > 0.006:
        errs.append("%s: improvement %s, times give %.2f%%" % (where, s, want))


def check_summary(s, errs, where):
    if not isinstance(s, dict):
        errs.append(where + ": repo_summary missing")
        return
    for k in SUMMARY:
        if not isinstance(s.get(k), int) or isinstance(s.get(k), bool) or s[k] < 0:
            errs.append("%s: %s must be a non-negative integer" % (where, k))
            return
    if s["total_num"] != s["repo_add_num"] + s["repo_hit_num"] + s["repo_unsatisfied_num"]:
        errs.append(where + ": total != add + hit + unsatisfied")
    if s["repo_hit_num"] != s["repo_reserved_num"] + s["repo_update_num"]:
        errs.append(where + ": hit != reserved + update")


def check(path):
    errs = []
    kind = "opat" if "aoe_result_opat_" in path else "sgat"
    if not re.search(r"aoe_result_(opat|sgat)_\d{17}_pid\d+\.json$", path):
        errs.append(path + ": file name does not follow AOE's pattern")
    doc = json.load(open(path))
    if not isinstance(doc, dict) or not doc:
        return [path + ": not a non-empty object"]
    for key, task in doc.items():
        w = "%s: %s" % (path, key)
        if not re.fullmatch(r"report_\d{17}_\d+", key):
            errs.append(w + ": bad report key")
        if not isinstance(task, list) or len(task) != 2:
            errs.append(w + ": must be [basic, OPAT|SGAT]")
            continue
        basic = task[0].get("basic")
        if not isinstance(basic, dict) or not isinstance(basic.get("tuning_name"), str) \
                or not num(basic.get("tuning_time(s)")):
            errs.append(w + ": bad basic object")
        if kind == "opat":
            o = task[1].get("OPAT")
            if not isinstance(o, dict):
                errs.append(w + ": no OPAT object")
                continue
            if o.get("opat_tune_result") not in ("tune success", "tune failed"):
                errs.append(w + ": bad opat_tune_result")
            mod = o.get("repo_modified_operators", {})
            for arr in ("add_repo_operators", "update_repo_operators"):
                for e in mod.get(arr, None) or []:
                    for f in ("op_name", "op_type"):
                        if not isinstance(e.get(f), str):
                            errs.append("%s: %s entry lacks %s" % (w, arr, f))
                    gain_ok(e, "performance_before_tune(us)",
                            "performance_after_tune(us)", errs, w + ": " + arr)
                if not isinstance(mod.get(arr), list):
                    errs.append("%s: %s must be an array" % (w, arr))
            check_summary(o.get("repo_summary"), errs, w)
            s = o.get("repo_summary") or {}
            if s and (len(mod.get("add_repo_operators", [])) != s.get("repo_add_num") or
                      len(mod.get("update_repo_operators", [])) != s.get("repo_update_num")):
                errs.append(w + ": entry counts differ from repo_summary")
            failed = o.get("tune_failed_operators")
            if (o.get("opat_tune_result") == "tune failed") != bool(failed):
                errs.append(w + ": tune failed iff tune_failed_operators is non-empty")
            if failed is not None and not all(isinstance(x, str) for x in failed):
                errs.append(w + ": tune_failed_operators must hold names")
        else:
            o = task[1].get("SGAT")
            if not isinstance(o, dict):
                errs.append(w + ": no SGAT object")
                continue
            gain_ok({"performance_improvement": o.get("model_performance_improvement"),
                     "b": o.get("model_baseline_performance(ms)"),
                     "a": o.get("model_result_performance(ms)")}, "b", "a", errs, w + ": model")
            mod = o.get("repo_modified_subgraphs", {})
            for arr in ("add_repo_subgraphs", "update_repo_subgraphs"):
                if not isinstance(mod.get(arr), list):
                    errs.append("%s: %s must be an array" % (w, arr))
                    continue
                for e in mod[arr]:
                    if not isinstance(e.get("repo_key"), str):
                        errs.append("%s: %s entry lacks repo_key" % (w, arr))
                    gain_ok(e, "performance_before_tune(ms)",
                            "performance_after_tune(ms)", errs, w + ": " + arr)
            check_summary(o.get("repo_summary"), errs, w)
    return errs


def main():
    errs = []
    for p in sys.argv[1:]:
        try:
            errs += check(p)
        except (OSError, ValueError, AttributeError) as e:
            errs.append("%s: %s" % (p, e))
    for e in errs:
        print(e)
    sys.exit(1 if errs or len(sys.argv) < 2 else 0)


main()
