"""Chapters of the DP-FedPAQ part (privacy-augmented FedPAQ, Mohammadi et al.)."""
