"""Evaluation screens under /p/<slug>/evaluations/."""

from django.urls import path

from . import views

app_name = "evaluations"

urlpatterns = [
    path("p/<slug:slug>/evaluations/", views.leaderboard_page, name="leaderboard"),
    path("p/<slug:slug>/evaluations/leaderboard.csv", views.leaderboard_csv, name="csv"),
    path("p/<slug:slug>/evaluations/new/", views.run_start, name="start"),
    path("p/<slug:slug>/evaluations/compare/", views.compare_page, name="compare"),
    path("p/<slug:slug>/evaluations/<int:run_id>/", views.run_page, name="run"),
    path("p/<slug:slug>/evaluations/<int:run_id>/act/", views.run_action, name="act"),
    path("p/<slug:slug>/evaluations/<int:run_id>/predictions/<int:index>/", views.prediction_page, name="prediction"),
]
