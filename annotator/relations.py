"""Writes to the relations of a chain pair: decide on a candidate, add a link, rewrite the later QA, submit.

Every write locks the chain pair, refuses unless it is editable, and claims its version
(`version_claim`), so two people deciding on the same pair's links cannot overwrite each other.

Rewrites (SVBench): an accepted link asks the later QA to be rewritten so that answering it needs
the earlier clip. The relation keeps the later QA as it was (`original_*`) and the rewrite
(`rewritten_*`); while the link is accepted the later pair reads as rewritten. Rejecting the link
again, or clearing the rewrite, puts the original text back if the pair still reads as the
rewrite (a later hand edit of the pair is never overwritten). Changing the pair's text is a new
version of its chain (`chains.chain_turn_rewrite`), so an editor open on that chain sees it.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext as _

from projects.refusals import Refused
from videos.models import Video

from .chains import MAX_TEXT_CHARS, chain_turn_rewrite
from .concurrency import StaleVersion, version_claim
from .lifecycle import EDITABLE, item_transition
from .models import ChainPair, ItemStatus, Origin, QAChain, QAPair, Relation, RelationDecision
from .submission import Submitted, item_hand_on


class RelationInvalid(Refused):
    """The link or rewrite asked for cannot be saved; the message says why."""

    status, code = 422, "relation_invalid"

    @property
    def details(self) -> dict:
        return {"errors": [{"message": self.message}]}


class ChainPairNotEditable(Refused):
    """The chain pair is past the stage where its links may change."""

    status, code = 409, "not_editable"


class NoNextChain(Refused):
    """The clip after this chain's clip has no chain (or there is no such clip): nothing to link to yet."""

    status, code = 409, "no_next_chain"


def chain_pair_create(*, chain_before: QAChain, user) -> ChainPair:
    """The chain pair of `chain_before` and the chain of the next clip, for links drawn by hand.

    The relation-draft step makes chain pairs too; without a model an annotator opens one here. An
    existing pair (drafted or not) is returned as it is. A new one starts as `user`'s work (human
    origin, annotating). Raises NoNextChain when clip i+1 carries no chain.
    """
    with transaction.atomic():
        # The video's row serialises every writer of this video's chain pairs (the draft step too).
        Video.objects.select_for_update().filter(pk=chain_before.clip.video_id).first()
        video_id, index = chain_before.clip.video_id, chain_before.clip.index
        existing = ChainPair.objects.filter(video_id=video_id, before_index=index).first()
        if existing is not None:
            return existing
        chain_after = QAChain.objects.filter(clip__video_id=video_id, clip__index=index + 1).first()
        if chain_after is None:
            raise NoNextChain(
                gettext("Clip %(index)s has no QA chain yet: write it first, then link the two chains.")
                % {"index": index + 1}
            )
        author = user if getattr(user, "is_authenticated", False) else None
        chain_pair = ChainPair(
            project_id=chain_before.project_id,
            video_id=video_id,
            before_index=index,
            chain_before=chain_before,
            chain_after=chain_after,
            status=ItemStatus.DRAFT,
            origin=Origin.HUMAN,
            human_edited=True,
            author=author,
        )
        chain_pair._history_user = author
        chain_pair.save()
        item_transition(item=chain_pair, to_status=ItemStatus.ANNOTATING, actor=user, expect_from=ItemStatus.DRAFT)
    chain_pair.refresh_from_db()
    return chain_pair


def relation_types(project) -> dict[str, dict]:
    return {t["code"]: t for t in project.taxonomy("relation_types")}


def _lock(chain_pair: ChainPair, expected_version: int) -> ChainPair:
    locked = ChainPair.objects.select_for_update(of=("self",)).select_related("project").get(pk=chain_pair.pk)
    if locked.status not in EDITABLE:
        raise ChainPairNotEditable(
            _(
                "These links are %(status)s: they can change only while they are a draft, being annotated or being "
                "revised."
            )
            % {"status": locked.get_status_display().lower()}
        )
    if locked.version != expected_version:
        raise StaleVersion(item=locked, expected=expected_version)
    return locked


def _claim(locked: ChainPair, expected_version: int, user) -> None:
    version_claim(item=locked, expected=expected_version, user=user)
    if locked.status == ItemStatus.DRAFT:
        item_transition(item=locked, to_status=ItemStatus.ANNOTATING, actor=user, expect_from=ItemStatus.DRAFT)


def _relation_of(locked: ChainPair, relation_id: int) -> Relation:
    try:
        return Relation.objects.select_for_update(of=("self",)).get(pk=relation_id, chain_pair=locked)
    except Relation.DoesNotExist:
        raise RelationInvalid(_("That link is no longer there (its turn may have been deleted); reload.")) from None


def _text(value, what: str) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if len(text) > MAX_TEXT_CHARS:
        raise RelationInvalid(
            _("The rewritten %(what)s is longer than %(max_text_chars)s characters.")
            % {"what": what, "max_text_chars": MAX_TEXT_CHARS}
        )
    return text


def _has_rewrite(relation: Relation) -> bool:
    return bool(relation.rewritten_question and relation.rewritten_answer)


def _rewrite_apply(relation: Relation, user) -> None:
    """The later pair takes the rewrite (the link is accepted and has one)."""
    pair = QAPair.objects.get(pk=relation.to_pair_id)
    if not (relation.original_question or relation.original_answer):
        relation.original_question, relation.original_answer = pair.question, pair.answer
    chain_turn_rewrite(
        pair_id=pair.pk,
        question=relation.rewritten_question,
        answer=relation.rewritten_answer,
        user=user,
        reason=f"rewrite:relation {relation.pk}",
    )


def _rewrite_withdraw(relation: Relation, user) -> None:
    """Put the original text back, if the later pair still reads as this rewrite."""
    pair = QAPair.objects.get(pk=relation.to_pair_id)
    applied = (pair.question, pair.answer) == (relation.rewritten_question, relation.rewritten_answer)
    if applied and relation.original_question and relation.original_answer:
        chain_turn_rewrite(
            pair_id=pair.pk,
            question=relation.original_question,
            answer=relation.original_answer,
            user=user,
            reason=f"unrewrite:relation {relation.pk}",
        )


def relation_decide(*, relation: Relation, decision: str, expected_version: int, user) -> Relation:
    """Accept, reject or reopen (back to candidate) one link of a chain pair."""
    if decision not in RelationDecision.values:
        raise RelationInvalid(
            _("%(decision)r is not a decision: use accepted, rejected or candidate.") % {"decision": decision}
        )
    with transaction.atomic():
        locked = _lock(relation.chain_pair, expected_version)
        relation = _relation_of(locked, relation.pk)
        _claim(locked, expected_version, user)
        was = relation.decision
        relation.decision = decision
        if decision == RelationDecision.ACCEPTED and was != decision and _has_rewrite(relation):
            _rewrite_apply(relation, user)
        elif was == RelationDecision.ACCEPTED and decision != was:
            _rewrite_withdraw(relation, user)
        relation.save()
    return relation


def relation_add(
    *,
    chain_pair: ChainPair,
    from_pair_id: int,
    to_pair_id: int,
    relation_type: str,
    rationale: str = "",
    expected_version: int,
    user,
) -> Relation:
    """A link the annotator draws: from a turn of the earlier chain to one of the later chain; accepted."""
    with transaction.atomic():
        locked = _lock(chain_pair, expected_version)
        if relation_type not in relation_types(locked.project):
            known = ", ".join(relation_types(locked.project))
            raise RelationInvalid(
                _("%(relation_type)r is not a relation type of this project (%(known)s).")
                % {"relation_type": relation_type, "known": known}
            )
        from_pair = QAPair.objects.filter(pk=from_pair_id, chain_id=locked.chain_before_id).first()
        to_pair = QAPair.objects.filter(pk=to_pair_id, chain_id=locked.chain_after_id).first()
        if from_pair is None:
            raise RelationInvalid(_("Choose the earlier turn from the first chain of this pair."))
        if to_pair is None:
            raise RelationInvalid(_("Choose the later turn from the second chain of this pair."))
        if Relation.objects.filter(chain_pair=locked, from_pair=from_pair, to_pair=to_pair).exists():
            raise RelationInvalid(
                _("Turn %(from)s → turn %(to)s is already linked; change that link instead.")
                % {"from": from_pair.index + 1, "to": to_pair.index + 1}
            )
        _claim(locked, expected_version, user)
        try:
            with transaction.atomic():
                relation = Relation.objects.create(
                    chain_pair=locked,
                    from_pair=from_pair,
                    to_pair=to_pair,
                    relation_type=relation_type,
                    origin=Origin.HUMAN,
                    decision=RelationDecision.ACCEPTED,
                    rationale=_text(rationale, "rationale"),
                )
        except IntegrityError:
            raise RelationInvalid(_("That link was just added by someone else; reload.")) from None
    return relation


def relation_retype(*, relation: Relation, relation_type: str, expected_version: int, user) -> Relation:
    with transaction.atomic():
        locked = _lock(relation.chain_pair, expected_version)
        if relation_type not in relation_types(locked.project):
            raise RelationInvalid(
                _("%(relation_type)r is not a relation type of this project.") % {"relation_type": relation_type}
            )
        relation = _relation_of(locked, relation.pk)
        _claim(locked, expected_version, user)
        relation.relation_type = relation_type
        relation.save()
    return relation


def relation_rewrite(*, relation: Relation, question: str, answer: str, expected_version: int, user) -> Relation:
    """Set the rewrite of the later QA (both texts; both empty clears it). Applied at once if accepted."""
    question, answer = _text(question, "question"), _text(answer, "answer")
    if bool(question) != bool(answer):
        raise RelationInvalid(_("A rewrite needs both the question and the answer (or clear both to drop it)."))
    with transaction.atomic():
        locked = _lock(relation.chain_pair, expected_version)
        relation = _relation_of(locked, relation.pk)
        _claim(locked, expected_version, user)
        accepted = relation.decision == RelationDecision.ACCEPTED
        if accepted and not question and _has_rewrite(relation):
            _rewrite_withdraw(relation, user)  # cleared: the original comes back
        pair = QAPair.objects.get(pk=relation.to_pair_id)
        if question and not (relation.original_question or relation.original_answer):
            # Kept before the first rewrite, so the original stays beside it whatever happens next.
            relation.original_question, relation.original_answer = pair.question, pair.answer
        relation.rewritten_question, relation.rewritten_answer = question, answer
        if accepted and question:
            _rewrite_apply(relation, user)
        relation.save()
    return relation


def relation_remove(*, relation: Relation, expected_version: int, user) -> None:
    """Remove a link a person added; a machine candidate is rejected instead, so its proposal stays on record."""
    with transaction.atomic():
        locked = _lock(relation.chain_pair, expected_version)
        relation = _relation_of(locked, relation.pk)
        if relation.origin != Origin.HUMAN:
            raise RelationInvalid(_("A machine-proposed link is rejected, not removed."))
        _claim(locked, expected_version, user)
        if relation.decision == RelationDecision.ACCEPTED:
            _rewrite_withdraw(relation, user)
        relation.delete()


def chain_pair_submit(*, chain_pair: ChainPair, user, expected_version: int) -> Submitted:
    """Hand the links on once every candidate has been accepted or rejected (through the quality gate)."""
    with transaction.atomic():
        locked = _lock(chain_pair, expected_version)
        open_links = Relation.objects.filter(chain_pair=locked, decision=RelationDecision.CANDIDATE).count()
        if open_links:
            raise RelationInvalid(
                ngettext(
                    "%(n)s link is still a candidate: accept or reject it first.",
                    "%(n)s links are still a candidate: accept or reject them first.",
                    open_links,
                )
                % {"n": open_links}
            )
        if locked.author_id is None and getattr(user, "is_authenticated", False):
            ChainPair.objects.filter(pk=locked.pk).update(author=user)  # vouching for a draft as it stands
        result = item_hand_on(item=locked, user=user)
    chain_pair.status = locked.status
    return result
