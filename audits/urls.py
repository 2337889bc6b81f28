"""Audit screens under /p/<slug>/audit/."""

from django.urls import path

from . import views

app_name = "audits"

urlpatterns = [
    path("p/<slug:slug>/audit/", views.audit_page, name="page"),
    path("p/<slug:slug>/audit/static.csv", views.audit_csv, name="csv"),
]
