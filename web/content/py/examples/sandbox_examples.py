"""Sandbox engine examples for the ai_engine_manager client.

Run against a server started with `npm start`:

    export PYTHONPATH=clients/python
    AIEM_URL=http://127.0.0.1:8080 AIEM_TOKEN=$(npm run -s token -- --user alice) \
      python3 web/content/py/examples/sandbox_examples.py

The catalogue needs an enabled sandbox image `python` and template `small` in the workspace
`global`.
"""

import os
import tempfile

from ai_engine_manager import login

clients = login(
    url=os.environ.get("AIEM_URL", "http://127.0.0.1:8080"),
    token=os.environ["AIEM_TOKEN"],
)

# [START create]
sandboxes = clients.sandbox_engine_client
sandbox = sandboxes.create_sandbox_engine(
    parent="workspaces/default",
    sandbox_engine_id="agent-run-1",
    sandbox_engine_image="workspaces/global/sandboxEngineImages/default",
    sandbox_engine_template="workspaces/global/sandboxEngineTemplates/default",
    display_name="Agent run 1",
)
sandbox = sandboxes.wait(name=sandbox.name)
print(sandbox.state)  # SandboxEngineState.STATE_RUNNING
# [END create]

# [START work]
files = clients.filesystem_client
processes = clients.process_client

files.write_file(
    name=sandbox.name,
    path="/workspace/src/main.py",
    content=b"import sys\nprint('hello from the sandbox')\nprint('warning', file=sys.stderr)\n",
    create_parent_directories=True,
)
for info in files.list_directory(name=sandbox.name, path="/workspace/src"):
    print(info.path, info.size, info.mode)

process = processes.create_process(
    parent=sandbox.name,
    command="python3",
    args=["src/main.py"],
    working_directory="/workspace",
    auto_run=True,
)
process = processes.wait_process(name=process.name)
print(process.state, process.exit_code)
print(processes.read_output(name=process.name, output_stream="OUTPUT_STREAM_COMBINED").decode())
# [END work]

# [START large-files]
with tempfile.TemporaryDirectory() as tmp:
    with open(f"{tmp}/data.csv", "w") as f:
        f.writelines(f"{i},{i * i}\n" for i in range(100_000))
    uploaded = files.upload_file(name=sandbox.name, path="/workspace/data/data.csv", source=f"{tmp}/data.csv",
                                 create_parent_directories=True)
    print(uploaded.size)
    size = files.download_file(name=sandbox.name, path="/workspace/data/data.csv", destination=f"{tmp}/copy.csv")
    print(size == uploaded.size)  # True
# [END large-files]

# [START stream]
server = processes.create_process(
    parent=sandbox.name,
    command="python3",
    args=["-u", "-m", "http.server", "8000"],  # -u: unbuffered, so its output streams as written
    auto_run=True,
)
port = clients.port_client.create_port(parent=sandbox.name, port_id=8000, display_name="Preview")
print("preview at", port.internal_url)
for chunk in processes.stream_output(name=server.name):
    print(chunk.stream, chunk.data.decode(errors="replace"), end="")
    if b"Serving HTTP" in chunk.data:
        break
port = clients.port_client.wait(name=port.name, timeout_seconds=60)
print(port.state)  # PortState.STATE_READY: the server accepts connections
processes.send_signal(name=server.name, signal=15)
# [END stream]

# [START metrics]
metrics = clients.metrics_client.read_metrics(name=sandbox.name)
print(metrics.memory.current_bytes, metrics.memory.limit_bytes, metrics.cpu.usage_ratio)
print(metrics.disk.available_bytes, "of", metrics.disk.total_bytes, "bytes free")
# [END metrics]

# [START terminate]
sandboxes.terminate_sandbox_engine(name=sandbox.name)
sandboxes.delete_sandbox_engine(name=sandbox.name)
# [END terminate]
