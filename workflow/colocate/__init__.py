"""colocate: the science behind the pipeline.

Every function here takes arrays or DataFrames and returns them; none reads
config, paths chosen by the workflow, or the ``snakemake`` object.
"""

__version__ = "0.1.0"
