"""Generated code for chess.v1 (tools/generate_proto.py), kept apart from python-chess's `chess`."""
