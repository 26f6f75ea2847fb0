"""The HTTP service: FastAPI routes and the page, thin shells over the serving core
(:mod:`veracity.service.core`, whose :class:`~veracity.service.core.gateway.Gateway` answers).

Needs the ``serve`` extra (``pip install 'veracity[serve]'``: FastAPI, uvicorn,
python-multipart). :func:`veracity.service.app.create_app` builds the
application; :func:`veracity.service.server.serve` runs it (``veracity serve``).
"""
