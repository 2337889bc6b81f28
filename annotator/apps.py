from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"

    def ready(self):
        from videos.clips import clip_holder_register

        from .chains import chain_clip_ids

        # A chain hangs on its clip: re-planning a video's clips must not delete it with the clip.
        clip_holder_register(chain_clip_ids)
