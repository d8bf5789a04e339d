from pathlib import Path
import platform, os
DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
def machine(): return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
def print_table(rows):
    width = max(len(r["name"]) for r in rows)
    for row in rows:
        target = row.get("target", "")
        verdict = "" if "met" not in row else ("  met" if row["met"] else "  NOT MET")
        print(f"{row['name'].ljust(width)}  {row['value']:>12.3f}  {row['unit']:<8}  {target}{verdict}")
def write_docs(record): pass
