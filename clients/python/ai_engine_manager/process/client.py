"""The client for processes inside a sandbox engine: run commands, wait for them, read and stream
their output, send them signals.

Commands run directly, not through a shell; run ``/bin/sh -c "<script>"`` for shell features.

Example:
    >>> processes = clients.process_client
    >>> process = processes.create_process(
    ...     parent=sandbox.name, command="/bin/sh", args=["-c", "echo hello"], auto_run=True)
    >>> for chunk in processes.stream_output(name=process.name):
    ...     print(chunk.stream.name, chunk.data)
    OUTPUT_STREAM_STDOUT b'hello\\n'
    >>> processes.wait_process(name=process.name).exit_code
    0
"""

from __future__ import annotations

import socket
import time
from typing import Iterator, Mapping

from ai_engine_manager._client_base import ClientBase
from ai_engine_manager.exception import ApiConnectionException, TimeoutException
from ai_engine_manager.process.mapper import output_chunk_from_api, process_to_api
from ai_engine_manager.process.output_chunk import OutputChunk
from ai_engine_manager.process.output_stream import OutputStream
from ai_engine_manager.process.secret_environment_variable import SecretEnvironmentVariable
from ai_engine_manager.process.state import ProcessState

# BEGIN GENERATED IMPORTS (scripts/generate.py)
from ai_engine_manager import _codec as _c
from ai_engine_manager.process.mapper import output_frame_from_api
from ai_engine_manager.process.mapper import process_from_api
from ai_engine_manager.process.mapper import processes_page_from_api
from ai_engine_manager.process.output_frame import OutputFrame
from ai_engine_manager.process.page import ProcessesPage
from ai_engine_manager.process.process import Process
# END GENERATED IMPORTS

__all__ = ["ProcessClient"]

_SERVICE = "enginemanager.sandbox.v1.ProcessService."


class ProcessClient(ClientBase):
    """Runs commands inside a sandbox engine and gives access to their output. Every call is for
    the creator of the sandbox engine only; other callers are refused with PERMISSION_DENIED.
    Calls that start or signal a process fail with FAILED_PRECONDITION unless the sandbox engine
    is in `STATE_RUNNING`.

    A process's output is one log, kept in the order it was written, in which every chunk is
    tagged with the stream it came from (stdout or stderr) and has an offset: the number of
    bytes of both streams written before it. The log keeps a bounded amount of output per
    process; when the limit is reached the oldest output is discarded, and the calls that return
    output say how many bytes were discarded. A process never blocks because nobody reads its
    output.
    """

    # BEGIN GENERATED METHODS (scripts/generate.py)
    def get_process(
        self,
        name: str,
    ) -> Process:
        """Returns one process.

        Args:
            name: The process's name,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}/processes/{process}`.

        Returns:
            The process.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.sandbox.v1.ProcessService.GetProcess", request)
        return process_from_api(response.get("process") or {})

    def list_processes(
        self,
        parent: str,
        page_size: int = 0,
        page_token: str = "",
        filter: str = "",
    ) -> ProcessesPage:
        """Lists the processes of a sandbox engine, newest first.

        Args:
            parent: The sandbox engine to list processes of,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            page_size: The most processes to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            page_token: The `next_page_token` of a previous call, to get the following
                page. It is only valid with the same parent and filter.
            filter: An AIP-160 filter on `state`, for example `state = STATE_RUNNING` or
                `state = STATE_SUCCEEDED OR state = STATE_FAILED`.

        Returns:
            One page of results.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "parent": parent,
            "pageSize": page_size,
            "pageToken": page_token,
            "filter": filter,
        })
        response = self._connection.call("enginemanager.sandbox.v1.ProcessService.ListProcesses", request)
        return processes_page_from_api(response)

    def list_all_processes(
        self,
        parent: str,
        *,
        page_size: int = 0,
        filter: str = "",
    ) -> list[Process]:
        """Returns every result of :meth:`list_processes`, following ``next_page_token`` from
        page to page.

        Args:
            parent: The sandbox engine to list processes of,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}`.
            page_size: The most processes to return. 0 means 50; values above 1000 are
                treated as 1000; negative values are rejected.
            filter: An AIP-160 filter on `state`, for example `state = STATE_RUNNING` or
                `state = STATE_SUCCEEDED OR state = STATE_FAILED`.

        Returns:
            All the Process objects, in the order of the pages.

        Raises:
            CustomApiException: when the server rejects a call.
        """
        found: list[Process] = []
        page_token = ""
        while True:
            page = self.list_processes(parent, page_size=page_size, filter=filter, page_token=page_token)
            found.extend(page.processes)
            page_token = page.next_page_token
            if not page_token:
                return found

    def delete_process(
        self,
        name: str,
    ) -> Process:
        """Deletes a process and its output. A running process is killed first.

        Args:
            name: The process's name,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}/processes/{process}`.

        Returns:
            The process as it was when it was deleted.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.sandbox.v1.ProcessService.DeleteProcess", request)
        return process_from_api(response.get("process") or {})

    def start_process(
        self,
        name: str,
    ) -> Process:
        """Starts a pending process. Fails with FAILED_PRECONDITION unless the process is in
        `STATE_PENDING`, and with NOT_FOUND or PERMISSION_DENIED when a secret environment
        variable cannot be resolved; the process then stays pending.

        Args:
            name: The process's name,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}/processes/{process}`.

        Returns:
            The process, now in `STATE_RUNNING`, or already ended if it exited at once.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.sandbox.v1.ProcessService.StartProcess", request)
        return process_from_api(response.get("process") or {})

    def send_signal(
        self,
        name: str,
        signal: int,
    ) -> Process:
        """Sends a signal to a running process and to the processes it started. Fails with
        FAILED_PRECONDITION unless the process is in `STATE_RUNNING`.

        Args:
            name: The process's name,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}/processes/{process}`.
            signal: The signal number, 1-64, for example 9 to kill the process or 15 to
                ask it to terminate. Other values fail with INVALID_ARGUMENT.

        Returns:
            The process after the signal was sent. A process that ends because of the
            signal may still show `STATE_RUNNING` for a moment; use `WaitProcess` to
            wait for the end.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
            "signal": signal,
        })
        response = self._connection.call("enginemanager.sandbox.v1.ProcessService.SendProcessSignal", request)
        return process_from_api(response.get("process") or {})

    def read_output_frames(
        self,
        name: str,
    ) -> list[OutputFrame]:
        """Returns the output of a process written so far as frames: the chunks of both streams
        in the order they were written, each tagged with its stream, with the chunk
        boundaries that `StreamProcessOutput` sends. Joining the `data` of every frame gives
        what `ReadProcessOutput` returns for `OUTPUT_STREAM_COMBINED`; joining those of one
        stream, what it returns for that stream. Works in every state: a pending process has
        no output yet.

        Args:
            name: The process's name,
                `workspaces/{workspace}/sandboxEngines/{sandbox_engine}/processes/{process}`.

        Returns:
            The frames kept so far, in the order they were written.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        request = _c.drop_none({
            "name": name,
        })
        response = self._connection.call("enginemanager.sandbox.v1.ProcessService.ReadProcessOutputFrames", request)
        return [output_frame_from_api(item) for item in response.get("frames") or []]
    # END GENERATED METHODS

    def create_process(
        self,
        parent: str,
        process: Process | None = None,
        process_id: str = "",
        auto_run: bool = False,
        *,
        command: str = "",
        args: list[str] | None = None,
        working_directory: str = "",
        environment_variables: Mapping[str, str] | None = None,
        secret_environment_variables: Mapping[str, str | SecretEnvironmentVariable] | None = None,
    ) -> Process:
        """Creates a process in a running sandbox engine, and starts it when ``auto_run`` is true.

        Describe the process either as a :class:`~ai_engine_manager.process.process.Process` in
        ``process`` (the official client's way) or with the keyword-only ``command`` and the
        keyword arguments after it.

        Args:
            parent: The sandbox engine, ``workspaces/{workspace}/sandboxEngines/{sandbox_engine}``.
            process: The process to create; ``command`` and the keyword arguments are ignored
                when given.
            process_id: The process's id; the server generates one when empty.
            auto_run: Start at once; otherwise the process stays in ``STATE_PENDING`` until
                :meth:`start_process`.
            command: The program: an absolute path, or a name looked up in ``PATH``.
            args: The program's arguments, each passed as one argument.
            working_directory: The absolute directory to start in. Default ``/workspace``.
            environment_variables: Environment variables, added to the template's.
            secret_environment_variables: Environment variables whose values come from the
                secure store: a secret version name such as
                ``workspaces/default/secrets/db/versions/latest``, or a
                :class:`~ai_engine_manager.process.secret_environment_variable.SecretEnvironmentVariable`.

        Returns:
            The process, pending or running.

        Raises:
            CustomApiException: FAILED_PRECONDITION unless the sandbox engine is running,
                ALREADY_EXISTS when the id is taken.
        """
        if process is None:
            process = Process(
                command=command,
                args=list(args or []),
                working_directory=working_directory,
                environment_variables=dict(environment_variables or {}),
                secret_environment_variables={
                    key: value if isinstance(value, SecretEnvironmentVariable) else SecretEnvironmentVariable(secret_version=value)
                    for key, value in (secret_environment_variables or {}).items()
                },
            )
        response = self._connection.call(
            _SERVICE + "CreateProcess",
            {"parent": parent, "process": process_to_api(process), "processId": process_id, "autoRun": auto_run},
        )
        return process_from_api(response.get("process") or {})

    def wait_process(self, name: str, *, timeout_seconds: float | None = None) -> Process:
        """Blocks until a process has succeeded or failed, and returns it with its exit code.

        The server holds the request open until the process ends.

        Args:
            name: The process's name.
            timeout_seconds: How long to wait at most; ``None`` waits as long as it takes.

        Returns:
            The process, in ``STATE_SUCCEEDED`` or ``STATE_FAILED``.

        Raises:
            TimeoutException: when the time runs out first; the process keeps running.
            CustomApiException: NOT_FOUND when there is no such process.
        """
        try:
            response = self._connection.call(_SERVICE + "WaitProcess", {"name": name}, timeout=timeout_seconds)
        except ApiConnectionException as e:
            if timeout_seconds is not None and isinstance(e.__cause__, (socket.timeout, TimeoutError)):
                raise TimeoutException(f"{name} has not ended after {timeout_seconds} seconds") from None
            raise
        return process_from_api(response.get("process") or {})

    def wait_process_by_polling(
        self,
        name: str,
        timeout_seconds: float | None = 300,
        poll_interval_seconds: float = 1,
    ) -> Process:
        """Waits for a process to end by polling :meth:`get_process`, as the official client's
        method of this name does. :meth:`wait_process` waits without polling.

        Args:
            name: The process's name.
            timeout_seconds: How long to wait at most (default 300); ``None`` waits as long as it
                takes.
            poll_interval_seconds: How long to sleep between polls (default 1).

        Returns:
            The process, in ``STATE_SUCCEEDED`` or ``STATE_FAILED``.

        Raises:
            TimeoutError: when the process has not ended within ``timeout_seconds``; it keeps
                running.
            CustomApiException: NOT_FOUND when there is no such process.
        """
        start = time.monotonic()
        while True:
            process = self.get_process(name=name)
            if process.state in (ProcessState.STATE_SUCCEEDED, ProcessState.STATE_FAILED):
                return process
            if timeout_seconds is not None and time.monotonic() - start >= timeout_seconds:
                raise TimeoutError(
                    f"Process {name} did not reach final state within {timeout_seconds} seconds. "
                    f"Current state: {process.state.value}"
                )
            time.sleep(poll_interval_seconds)

    def read_output(
        self,
        name: str,
        output_stream: OutputStream | str = "OUTPUT_STREAM_COMBINED",
    ) -> bytes:
        """Returns the output of a process kept so far.

        Args:
            name: The process's name.
            output_stream: Which output, an :class:`OutputStream` or its name:
                ``OUTPUT_STREAM_STDOUT``, ``OUTPUT_STREAM_STDERR`` or ``OUTPUT_STREAM_COMBINED``
                (both, in the order they were written; the default).

        Returns:
            The output. When the process wrote more than the server keeps, the oldest bytes are
            missing.

        Raises:
            CustomApiException: NOT_FOUND when there is no such process.
        """
        response = self._connection.call(
            _SERVICE + "ReadProcessOutput",
            {"name": name, "outputStream": _c.enum_to_api(OutputStream, output_stream)},
        )
        return _c.bytes_from_api(response.get("data"))

    def stream_output(
        self,
        name: str,
        skip_replay: bool = False,
        *,
        start_offset: int = 0,
        include_keep_alive: bool = False,
        max_reconnects: int = 5,
    ) -> Iterator[OutputChunk]:
        """Yields the output of a process as it is written, until the process has ended and all
        its output was sent.

        Each chunk says which stream it came from and where it sits in the combined output. When
        the connection drops, the client reconnects and resumes right after the last chunk it
        yielded, so no byte is lost or repeated.

        Args:
            name: The process's name.
            skip_replay: Start with output written from now on, instead of replaying what was
                written so far.
            start_offset: The offset in the combined output to start from, for example the
                ``offset`` plus the length of the ``data`` of the last chunk of an earlier stream.
                Cannot be combined with ``skip_replay``.
            include_keep_alive: Also yield the empty keep-alive chunks the server sends while the
                process is quiet.
            max_reconnects: How many times in a row to reconnect after the connection dropped.

        Yields:
            :class:`~ai_engine_manager.process.output_chunk.OutputChunk` objects.

        Raises:
            CustomApiException: when the server refuses the stream or ends it with an error,
                for example OUT_OF_RANGE for an offset beyond the output written so far.
            ApiConnectionException: when the connection dropped more than ``max_reconnects``
                times in a row.
        """
        offset = start_offset
        resume = start_offset > 0
        failures = 0
        while True:
            request: dict[str, object] = {"name": name}
            if resume:
                request["startOffset"] = str(offset)
            elif skip_replay:
                request["skipReplay"] = True
            try:
                for message in self._connection.stream(_SERVICE + "StreamProcessOutput", request):
                    chunk = output_chunk_from_api(message)
                    failures = 0
                    if chunk.keep_alive or not (chunk.data or chunk.dropped_bytes):
                        # A keep-alive's offset is where the next chunk will start.
                        if chunk.offset > offset:
                            offset, resume = chunk.offset, True
                        if include_keep_alive:
                            yield chunk
                        continue
                    offset, resume = chunk.offset + len(chunk.data), True
                    yield chunk
                return
            except ApiConnectionException:
                failures += 1
                if failures > max_reconnects:
                    raise
                time.sleep(min(0.1 * 2**failures, 2.0))
