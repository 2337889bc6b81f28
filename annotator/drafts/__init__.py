"""Machine drafts: QA chains per clip, relation candidates between adjacent chains,
multi-agent descriptions, seed questions per task, candidate MCQs per video and task, and the
answers and distractors of those MCQs.

Rules every step keeps:
- A draft never overwrites human work: an item a person has edited (`human_edited`) or moved past
  the draft status is never touched.
- A re-run fills only what is missing. An untouched machine draft counts as present and is *not*
  regenerated, so a second run makes no new rows and no new model calls. To have an item drafted
  again, delete its draft; seeds for a task are asked for again only with `more`.
- Each item is checked again under a row lock just before it is written, so two runs racing each
  other, or a run racing an annotator, never write an item twice or over someone's edit; a machine
  write to an existing item bumps its version, so an editor holding the older version gets the
  conflict view instead of silently dropping the machine's addition.
- One item failing (an answer still unusable after the LLM layer's retries and repair, frames that
  cannot be sampled) is recorded with its reason and its LLM call; the other items go on.

Items run in parallel as a small pipeline: preparation (database reads, ffmpeg frame sampling) runs
a little ahead on its own threads, while LLM_CONCURRENCY requests (the per-endpoint limit the LLM
layer enforces across processes) wait on the model, so the endpoint never idles while frames are cut
or drafts are written.

One module per step (chains, relations, descriptions, seeds, mcqs, options); `base` holds what they
share, `inputs` what they show the model of a video, `pipeline` the parallel runner and `runs` the
services that run a step as a job.
"""

from .base import (
    CREATED,
    DRAFT_STEPS,
    FAILED,
    LANGUAGES,
    LIST_LIMIT,
    SKIPPED,
    SKIPPED_EXISTING,
    SKIPPED_HUMAN,
    STEP_BY_KIND,
    DraftStep,
    DraftSummary,
    ItemResult,
    draft_tasks,
    draft_videos,
    language_name,
)
from .coverage import draft_coverage
from .descriptions import description_models
from .inputs import comments_text, descriptions_text, subtitles_text, video_clip_context
from .options import options_shuffle
from .pipeline import draft_concurrency
from .runs import DraftRunFailed, draft_job_run, draft_run_start, draft_step_run
from .seed_library import seed_create, seed_update

__all__ = [
    "CREATED",
    "DRAFT_STEPS",
    "FAILED",
    "LANGUAGES",
    "LIST_LIMIT",
    "SKIPPED",
    "SKIPPED_EXISTING",
    "SKIPPED_HUMAN",
    "STEP_BY_KIND",
    "DraftRunFailed",
    "DraftStep",
    "DraftSummary",
    "ItemResult",
    "comments_text",
    "descriptions_text",
    "description_models",
    "draft_concurrency",
    "draft_coverage",
    "draft_job_run",
    "draft_run_start",
    "draft_step_run",
    "draft_tasks",
    "draft_videos",
    "language_name",
    "options_shuffle",
    "seed_create",
    "seed_update",
    "subtitles_text",
    "video_clip_context",
]
