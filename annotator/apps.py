from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"

    def ready(self):
        from simple_history.signals import pre_create_historical_record

        from .models import Relation
        from .versions import link_version_tag

        # Link history rows name their chain pair's version, so its content versions can be rebuilt.
        pre_create_historical_record.connect(
            link_version_tag, sender=Relation.history.model, dispatch_uid="annotator.link_version_tag"
        )

        from videos.clips import clip_holder_register

        from .chains import chain_clip_ids

        # A chain hangs on its clip: re-planning a video's clips must not delete it with the clip.
        clip_holder_register(chain_clip_ids)
