"""The filesystem of a sandbox engine: files, directories and their information."""

from ai_engine_manager.filesystem.client import FilesystemClient
from ai_engine_manager.filesystem.file_info import FileInfo
from ai_engine_manager.filesystem.file_type import FileType

__all__ = ["FilesystemClient", "FileInfo", "FileType"]
