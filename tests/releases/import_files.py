"""Benchmark files for import tests, written into a folder laid out as a release."""

import json
from pathlib import Path

from annotator.models import MCQ, ChainPair, QAChain
from releases.models import BenchmarkImport
from videos.models import Clip, Comment, SubtitleCue


def write_files(root: Path, files: dict) -> Path:
    """{relative path: JSON value, list of JSONL values (`jsonl:` prefix) or text} → files under root."""
    for rel, content in files.items():
        if rel.startswith("jsonl:"):
            rel = rel[len("jsonl:") :]
            text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in content)
        elif isinstance(content, str):
            text = content
        else:
            text = json.dumps(content, ensure_ascii=False)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def nothing_written(project) -> bool:
    return not (
        MCQ.objects.filter(project=project).exists()
        or QAChain.objects.filter(project=project).exists()
        or ChainPair.objects.filter(project=project).exists()
        or Clip.objects.filter(video__project=project).exists()
        or SubtitleCue.objects.filter(video__project=project).exists()
        or Comment.objects.filter(video__project=project).exists()
        or BenchmarkImport.objects.filter(project=project).exists()
    )


def messages(report) -> list[str]:
    return [p["message"] for p in report.problems]
