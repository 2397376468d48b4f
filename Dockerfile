# Autograd Explorer as a public demo (hosted mode), served on port 8501:
#   docker build -t autograd-explorer .
#   docker run --rm -p 8501:8501 autograd-explorer
FROM python:3.12-slim

# graphviz's `dot` lays out the autograd graphs; bubblewrap and libseccomp wall off each run
# (SECURITY.md: the container needs `--security-opt seccomp=unconfined` or a profile that
# allows user namespaces, else hosted mode refuses to start).
RUN apt-get update \
    && apt-get install -y --no-install-recommends graphviz bubblewrap libseccomp2 \
    && rm -rf /var/lib/apt/lists/*

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1

# Dependencies first (CPU PyTorch and the rest): this layer stays while only the app changes.
COPY requirements.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt

# The app: the explorer package, the `autograd-explorer` command, and the app's files in
# /usr/local/share/autograd-explorer, all owned by root and read-only for the server.
COPY . /tmp/app
RUN pip install --no-deps /tmp/app && rm -rf /tmp/app /tmp/requirements.txt

RUN useradd --create-home --uid 10001 explorer
USER explorer
WORKDIR /home/explorer

ENV EXPLORER_HOSTED=1
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request as r; sys.exit(r.urlopen('http://localhost:8501/_stcore/health', timeout=4).read() != b'ok')"]
CMD ["autograd-explorer", "--address", "0.0.0.0", "--port", "8501"]
