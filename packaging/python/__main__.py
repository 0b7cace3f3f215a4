"""python -m micro_rag_mcp runs the server like the micro-rag-mcp command."""
from . import main

main()
