"""Generators of data files the package ships."""
