# nbconvert's config for the notebook rules (colocate.report.notebooks.jupyter_config_first puts this directory on
# JUPYTER_CONFIG_PATH). The kernel runs over IPC sockets, not TCP on localhost, which ipykernel warns about on every
# notebook. The sockets' path is absolute (the kernel runs in the notebook's directory, nbconvert in the workflow's),
# on the local temporary directory (not a network home) and one per process; they are removed when the kernel stops.
import os
import tempfile

c = get_config()  # noqa: F821 (given by traitlets when it loads the file)
c.KernelManager.transport = "ipc"
c.KernelManager.ip = os.path.join(tempfile.gettempdir(), f"colocate-kernel-{os.getpid()}")
