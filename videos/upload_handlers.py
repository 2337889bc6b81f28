"""Uploads go to a temporary file on disk (never memory) and are hashed as the bytes arrive."""

import hashlib

from django.core.files.uploadhandler import TemporaryFileUploadHandler


class HashingUploadHandler(TemporaryFileUploadHandler):
    """Like Django's temporary-file handler, plus `uploaded_file.sha256` computed on the fly."""

    def new_file(self, *args, **kwargs):
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
