"""python -m micro_rag_mcp_go runs the server like the micro-rag-mcp command."""
from . import main

main()
