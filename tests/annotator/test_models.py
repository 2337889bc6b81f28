"""The invariants the database itself enforces, so no code path can break them."""

import pytest
from django.db import IntegrityError, connection, transaction

from annotator.models import ChainPair, ItemKind, Relation, ReviewEvent
from tests import factories

pytestmark = pytest.mark.django_db


def _violates(fn):
    with pytest.raises(IntegrityError), transaction.atomic():
        fn()


def test_pair_order_is_unique_within_a_chain():
    chain = factories.QAChainFactory()
    factories.QAPairFactory(chain=chain, index=0)

    def duplicate():
        factories.QAPairFactory(chain=chain, index=0)
        # The constraint is deferred (so reorders can swap indexes); force the check now.
        if connection.vendor == "postgresql":
            connection.cursor().execute("SET CONSTRAINTS ALL IMMEDIATE")

    _violates(duplicate)


def test_clip_must_start_before_it_ends_and_end_within_the_video():
    video = factories.VideoFactory(duration_s=30.0)
    _violates(lambda: factories.ClipFactory(video=video, index=0, start_s=5.0, end_s=5.0))
    _violates(lambda: factories.ClipFactory(video=video, index=0, start_s=-1.0, end_s=5.0))
    _violates(lambda: factories.ClipFactory(video=video, index=0, start_s=20.0, end_s=31.0))
    clip = factories.ClipFactory(video=video, index=0, start_s=20.0, end_s=30.0)
    # Shrinking the video below an existing clip is refused too.
    video.duration_s = 25.0
    _violates(lambda: video.save(update_fields=["duration_s"]))
    assert clip.pk


def test_chain_pair_joins_adjacent_chains_of_one_video():
    video = factories.VideoFactory()
    c0, c1, c2 = (factories.QAChainFactory(clip=factories.ClipFactory(video=video, index=i)) for i in range(3))
    other = factories.QAChainFactory(clip=factories.ClipFactory(index=1))
    project = video.project
    _violates(
        lambda: ChainPair.objects.create(project=project, video=video, before_index=0, chain_before=c0, chain_after=c2)
    )
    _violates(
        lambda: ChainPair.objects.create(
            project=project, video=video, before_index=0, chain_before=c0, chain_after=other
        )
    )
    _violates(
        lambda: ChainPair.objects.create(project=project, video=video, before_index=1, chain_before=c0, chain_after=c1)
    )
    assert ChainPair.objects.create(project=project, video=video, before_index=0, chain_before=c0, chain_after=c1).pk


def test_relation_goes_from_the_earlier_chain_to_the_later_one():
    pair = factories.ChainPairFactory()
    early = factories.QAPairFactory(chain=pair.chain_before, index=0)
    late = factories.QAPairFactory(chain=pair.chain_after, index=0)
    _violates(lambda: Relation.objects.create(chain_pair=pair, from_pair=late, to_pair=early, relation_type="event"))
    _violates(lambda: Relation.objects.create(chain_pair=pair, from_pair=early, to_pair=early, relation_type="event"))
    assert Relation.objects.create(chain_pair=pair, from_pair=early, to_pair=late, relation_type="event").pk


def test_mcq_has_at_most_one_correct_option_in_range_and_a_sane_span():
    _violates(lambda: factories.MCQFactory(correct_index=5))
    _violates(lambda: factories.MCQFactory(referring_start=10, referring_end=3))
    assert factories.MCQFactory(correct_index=4).pk


def test_review_events_are_append_only_in_the_database():
    chain = factories.QAChainFactory()
    event = ReviewEvent.objects.create(
        project=chain.project, item_kind=ItemKind.QA_CHAIN, qa_chain=chain, to_status="submitted"
    )
    _violates(lambda: ReviewEvent.objects.filter(pk=event.pk).update(comment="rewritten history"))
    # An event must point at exactly one item of its kind.
    _violates(
        lambda: ReviewEvent.objects.create(project=chain.project, item_kind=ItemKind.MCQ, qa_chain=chain, to_status="x")
    )
