"""Step 2: relation candidates between the QA chains of adjacent clips."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, F

from llm.client import chat_json
from llm.clip_context import seconds_text
from projects.models import Project
from videos.models import Clip, Video

from ..models import ChainPair, ItemStatus, Origin, QAChain, QAPair, Relation, RelationDecision
from .base import (
    CREATED,
    FAILED,
    SKIPPED,
    SKIPPED_EXISTING,
    SKIPPED_HUMAN,
    DraftSummary,
    Item,
    ItemResult,
    language_name,
    schema_for,
    schema_part,
    untouched,
)


def _chain_text(pairs: list[QAPair]) -> str:
    return "\n".join(f"{n}. Q: {p.question}\n   A: {p.answer}" for n, p in enumerate(pairs, start=1))


class RelationStep:
    def __init__(self, project: Project, params: dict) -> None:
        self.project = project
        self.types = [t for t in project.taxonomy("relation_types") if t.get("code")]
        self.codes = [t["code"] for t in self.types]
        self.schema = schema_for(project, "relations")
        kind = schema_part(self.schema, "properties", "links", "items", "properties", "type")
        if kind is not None and self.codes:
            kind["enum"] = list(self.codes)  # the project's own types, which may differ from the defaults

    def plan(self, videos: list[Video], summary: DraftSummary) -> list[Item]:
        chains = {
            (c.clip.video_id, c.clip.index): c
            for c in QAChain.objects.filter(clip__video__in=videos).select_related("clip")
        }
        pairs = {
            (p.video_id, p.before_index): p
            for p in ChainPair.objects.filter(video__in=videos)
            .select_related("chain_before", "chain_after")
            .annotate(n_relations=Count("relations"))
        }
        clip_indexes: dict[int, list[int]] = {}
        for video_id, index in Clip.objects.filter(video__in=videos).order_by("index").values_list("video_id", "index"):
            clip_indexes.setdefault(video_id, []).append(index)
        clip_sets = {video_id: set(indexes) for video_id, indexes in clip_indexes.items()}
        items = []
        for video in videos:
            for i in clip_indexes.get(video.pk, []):
                if i + 1 not in clip_sets[video.pk]:
                    continue
                label, ref = f"{video.name} chains {i}→{i + 1}", {"video": video.pk, "before_index": i}
                existing = pairs.get((video.pk, i))
                if existing is not None:
                    if not untouched(existing):
                        summary.record(label, ref, ItemResult(SKIPPED_HUMAN))
                    elif existing.machine_draft is not None or existing.n_relations:
                        summary.record(label, ref, ItemResult(SKIPPED_EXISTING))
                    else:
                        items.append(Item(label, ref, (video, existing.chain_before, existing.chain_after)))
                    continue
                before, after = chains.get((video.pk, i)), chains.get((video.pk, i + 1))
                if before is None or after is None:
                    missing = ", ".join(str(k) for k, c in ((i, before), (i + 1, after)) if c is None)
                    summary.record(label, ref, ItemResult(SKIPPED, reason=f"no QA chain yet for clip {missing}"))
                    continue
                items.append(Item(label, ref, (video, before, after)))
        return items

    def prepare(self, obj) -> dict:
        video, before, after = obj
        return {
            "before": list(QAPair.objects.filter(chain_id=before.pk).order_by("index")),
            "after": list(QAPair.objects.filter(chain_id=after.pk).order_by("index")),
            "before_clip": Clip.objects.get(pk=before.clip_id),
            "after_clip": Clip.objects.get(pk=after.clip_id),
        }

    def _links(self, raw_links: list, before: list[QAPair], after: list[QAPair]) -> tuple[list[dict], list[str]]:
        """The model's links checked against the real chains; bad ones are dropped, each with why."""
        kept, dropped, seen = [], [], set()
        for n, link in enumerate(raw_links, start=1):
            if not isinstance(link, dict):
                dropped.append(f"link {n}: not an object")
                continue
            b, a, kind = link.get("before"), link.get("after"), str(link.get("type") or "").strip().lower()
            if not isinstance(b, int) or isinstance(b, bool) or not 1 <= b <= len(before):
                dropped.append(f"link {n}: turn {b!r} of the earlier chain does not exist (it has {len(before)})")
                continue
            if not isinstance(a, int) or isinstance(a, bool) or not 1 <= a <= len(after):
                dropped.append(f"link {n}: turn {a!r} of the later chain does not exist (it has {len(after)})")
                continue
            code = next((c for c in self.codes if c.lower() == kind), None)
            if code is None:
                dropped.append(f"link {n}: type {link.get('type')!r} is not one of {', '.join(self.codes)}")
                continue
            if (b, a) in seen:
                dropped.append(f"link {n}: turns {b}→{a} are already linked")
                continue
            seen.add((b, a))
            kept.append(
                {
                    "from": before[b - 1].index,
                    "to": after[a - 1].index,
                    "type": code,
                    "rationale": str(link.get("reason") or "").strip(),
                }
            )
        return kept, dropped

    def draft(self, obj, prepared: dict) -> ItemResult:
        video, before_chain, after_chain = obj
        before, after = prepared["before"], prepared["after"]
        if not before or not after:
            return ItemResult(SKIPPED, reason="one of the two chains has no QA pairs")
        b_clip, a_clip = prepared["before_clip"], prepared["after_clip"]
        result = chat_json(
            project=self.project,
            step="relations",
            template_key="relations",
            context={
                "clip_before": f"clip {b_clip.index}, {seconds_text(b_clip.start_s)}–{seconds_text(b_clip.end_s)} s",
                "clip_after": f"clip {a_clip.index}, {seconds_text(a_clip.start_s)}–{seconds_text(a_clip.end_s)} s",
                "chain_before": _chain_text(before),
                "chain_after": _chain_text(after),
                "relation_types": "\n".join(
                    f"- {t['code']} ({t.get('label', t['code'])}): {t.get('guideline', '')}" for t in self.types
                ),
                "language": language_name(self.project),
            },
            schema=self.schema,
        )
        raw = result.parsed.get("links") if isinstance(result.parsed, dict) else None
        links, dropped = self._links(raw if isinstance(raw, list) else [], before, after)
        draft = {"relations": links, **({"dropped": dropped} if dropped else {})}
        with transaction.atomic():
            # The video's row serialises every run that makes chain pairs for this video.
            Video.objects.select_for_update().filter(pk=video.pk).first()
            current = {
                chain_id: list(QAPair.objects.filter(chain_id=chain_id).order_by("index").values_list("pk", "index"))
                for chain_id in (before_chain.pk, after_chain.pk)
            }
            if current[before_chain.pk] != [(p.pk, p.index) for p in before] or current[after_chain.pk] != [
                (p.pk, p.index) for p in after
            ]:
                return ItemResult(
                    FAILED,
                    reason="the chains were edited while the model was answering; run the step again",
                    call=result.call,
                )
            pair = ChainPair.objects.select_for_update().filter(video=video, before_index=b_clip.index).first()
            if pair is None:
                pair = ChainPair.objects.create(
                    project=self.project,
                    video=video,
                    before_index=b_clip.index,
                    chain_before=before_chain,
                    chain_after=after_chain,
                    status=ItemStatus.DRAFT,
                    origin=Origin.MACHINE,
                    machine_draft=draft,
                    draft_call=result.call,
                )
            elif not untouched(pair):
                return ItemResult(SKIPPED_HUMAN, call=result.call)
            elif pair.machine_draft is not None or pair.relations.exists():
                return ItemResult(SKIPPED_EXISTING, call=result.call)
            else:
                # A pair someone opened but left untouched: fill it, and move its version on so an
                # editor still holding the empty version gets a conflict rather than erasing these.
                ChainPair.objects.filter(pk=pair.pk).update(
                    machine_draft=draft, draft_call=result.call, version=F("version") + 1
                )
            by_index_before = {p.index: p for p in before}
            by_index_after = {p.index: p for p in after}
            Relation.objects.bulk_create(
                Relation(
                    chain_pair=pair,
                    from_pair=by_index_before[link["from"]],
                    to_pair=by_index_after[link["to"]],
                    relation_type=link["type"],
                    origin=Origin.MACHINE,
                    decision=RelationDecision.CANDIDATE,
                    rationale=link["rationale"],
                    draft_call=result.call,
                )
                for link in links
            )
        return ItemResult(
            CREATED,
            rows=1,
            call=result.call,
            counts={"relations": len(links), "dropped_links": len(dropped)},
            warnings=[f"dropped {d}" for d in dropped],
        )
