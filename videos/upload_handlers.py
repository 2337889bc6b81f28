"""Uploads go to a temporary file on disk (never memory) and are hashed as the bytes arrive.

A file sent to a project's URL by someone who may not see that project is refused before its first
byte is stored: the body of a request is read before most views get to authorise (CSRF reads the
form, DRF parses on first access), and a non-member must not be able to fill the disk.
"""

import hashlib

from django.core.files.uploadhandler import StopUpload, TemporaryFileUploadHandler

from projects.models import Project
from projects.permissions import Action, can


def may_send_files(request) -> bool:
    """Files posted to a URL naming a project come only from people who may see that project."""
    match = getattr(request, "resolver_match", None)
    slug = match.kwargs.get("slug") if match is not None else None
    if slug is None:
        return True
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return False
    project = Project.objects.filter(slug=slug).first()
    return project is not None and can(user, Action.VIEW, project)


class HashingUploadHandler(TemporaryFileUploadHandler):
    """Like Django's temporary-file handler, plus `uploaded_file.sha256` computed on the fly."""

    def new_file(self, *args, **kwargs):
        if not may_send_files(self.request):
            # Stop reading the body: the view then answers 404 as for any project the caller cannot see.
            raise StopUpload(connection_reset=True)
        super().new_file(*args, **kwargs)
        self._sha = hashlib.sha256()

    def receive_data_chunk(self, raw_data, start):
        self._sha.update(raw_data)
        return super().receive_data_chunk(raw_data, start)

    def file_complete(self, file_size):
        uploaded = super().file_complete(file_size)
        if uploaded is not None:
            uploaded.sha256 = self._sha.hexdigest()
        return uploaded
